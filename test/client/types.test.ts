/**
 * Type tests of the client's per-model typing. They are checked by `npx tsc --noEmit` (tsconfig
 * includes test/; every `@ts-expect-error` below must meet an error, else TS2578 fails the build)
 * and, independently of the project's tsconfig, by test/client/types-compile.test.ts, which compiles
 * this file with the TypeScript API and fails on any diagnostic.
 */
import { describe, expectTypeOf, it } from 'vitest';
import { Mediaforge, type CreateTaskParams, type CreateTaskParamsFor, type ModelId, type ModelInput, type Quote, type Task } from '@mediaforge/client';

const client = new Mediaforge({ apiKey: 'sk-service-types', baseUrl: 'http://127.0.0.1:1' });

// Never called: the functions exist to be type-checked.
export function compileOnly() {
  // A valid input compiles.
  void client.tasks.create(
    {
      model: 'vendor_d/family_d/reference-to-video',
      input: { prompt: 'The cat of Picture 1 jumps.', reference_image_urls: ['https://example.com/cat.png'], resolution: '2k', duration_seconds: 8, aspect_ratio: '21:9' },
      callBackUrl: 'https://example.com/hooks',
    },
    { idempotencyKey: 'k-1', wait: 30 },
  );

  // @ts-expect-error family_d has no seed field: a wrong input field for this model is a compile error
  void client.tasks.create({ model: 'vendor_d/family_d/reference-to-video', input: { prompt: 'x', reference_image_urls: ['https://example.com/a.png'], seed: 7 } });

  // @ts-expect-error 1080p is not one of family_d's resolutions (768p, 2k): an out-of-enum value is a compile error
  void client.tasks.create({ model: 'vendor_d/family_d/reference-to-video', input: { prompt: 'x', reference_image_urls: ['https://example.com/a.png'], resolution: '1080p' } });

  // @ts-expect-error shot_type customize exists on vendor_c/o3 only
  void client.tasks.create({ model: 'vendor_b/family_c-2.6/reference-to-video', input: { prompt: 'x', shot_type: 'customize' } });

  // The same field and value are fine on the model that has them.
  void client.tasks.create({ model: 'vendor_c/o3/reference-to-video', input: { prompt: 'x', reference_image_urls: ['https://example.com/a.png'], shot_type: 'customize', resolution: '4k' } });
  void client.tasks.create({ model: 'vendor_a/family_a-2.0-mini/reference-to-video', input: { prompt: 'x', seed: 7, duration_seconds: -1, enable_web_search: true } });
  void client.tasks.create({ model: 'vendor_d/family_d-lora/reference-to-video', input: { prompt: 'x', loras: [{ path: 'https://example.com/a.safetensors' }] } });

  // @ts-expect-error enable_prompt_expansion accepts only false on family_d
  void client.tasks.create({ model: 'vendor_d/family_d/reference-to-video', input: { prompt: 'x', reference_image_urls: ['https://example.com/a.png'], enable_prompt_expansion: true } });

  // @ts-expect-error an unknown model id is a compile error
  void client.tasks.create({ model: 'vendor_z/nothing/reference-to-video', input: { prompt: 'x' } });

  // quote takes the same typed body
  // @ts-expect-error 8k is not a q4-preview resolution
  void client.tasks.quote({ model: 'vendor_e/q4-preview/reference-to-video', input: { prompt: 'x', reference_image_urls: ['https://example.com/a.png'], resolution: '8k' } });

  // A request kept in a variable `as const` keeps its model literal and is checked the same way.
  const request = { model: 'vendor_d/family_d/reference-to-video', input: { prompt: 'x', reference_image_urls: ['https://example.com/a.png'], resolution: '2k' } } as const;
  void client.tasks.createAndWait(request);
  const wrongRequest = { model: 'vendor_d/family_d/reference-to-video', input: { prompt: 'x', resolution: '4k' } } as const;
  // @ts-expect-error 4k is not a family_d resolution, in a variable too
  void client.tasks.create(wrongRequest);

  // A body typed for any model is accepted as a whole.
  const anyParams = {} as CreateTaskParams;
  void client.tasks.create(anyParams);

  // @ts-expect-error duration_seconds is an integer field, not a string
  const wrongType: ModelInput<'vendor_d/family_d/reference-to-video'> = { duration_seconds: '5' };
  void wrongType;
}

describe('client types', () => {
  it('types input per model', () => {
    expectTypeOf<ModelInput<'vendor_d/family_d/reference-to-video'>['resolution']>().toEqualTypeOf<'768p' | '2k' | undefined>();
    expectTypeOf<ModelInput<'vendor_e/q4-preview/reference-to-video'>['resolution']>().toEqualTypeOf<'540p' | '720p' | '1080p' | '2k' | '4k' | undefined>();
    expectTypeOf<ModelInput<'vendor_d/family_d/reference-to-video'>>().not.toHaveProperty('seed');
    expectTypeOf<ModelInput<'vendor_a/family_a-2.0-mini/reference-to-video'>>().toHaveProperty('seed');
    expectTypeOf<CreateTaskParamsFor<'vendor_c/o3/reference-to-video'>['model']>().toEqualTypeOf<'vendor_c/o3/reference-to-video'>();
    expectTypeOf<'vendor_d/family_d/reference-to-video'>().toExtend<ModelId>();
    expectTypeOf<'vendor_z/none/reference-to-video'>().not.toExtend<ModelId>();
  });

  it('types the results', () => {
    expectTypeOf(client.tasks.create<'vendor_d/family_d/reference-to-video'>).parameter(0).toEqualTypeOf<CreateTaskParamsFor<'vendor_d/family_d/reference-to-video'>>();
    expectTypeOf(client.tasks.create<'vendor_d/family_d/reference-to-video'>).returns.resolves.toEqualTypeOf<Task>();
    expectTypeOf(client.tasks.quote<'vendor_d/family_d/reference-to-video'>).returns.resolves.toEqualTypeOf<Quote>();
    expectTypeOf<CreateTaskParamsFor<'vendor_c/o3/reference-to-video'>>().toExtend<CreateTaskParams>();
    expectTypeOf<Task['state']>().toEqualTypeOf<'queued' | 'running' | 'succeeded' | 'failed' | 'canceled' | 'expired'>();
    expectTypeOf<Quote['estimatedCredits']>().toEqualTypeOf<number>();
  });
});
