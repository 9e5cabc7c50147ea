/**
 * Validation and pricing in process, on one core: the typical family_c-2.6 request through
 *   - the generated validator + the generated price (validatePriceOpsPerSec),
 *   - the generated validator alone,
 *   - an equivalent zod schema (zod 3),
 *   - ajv compiled at run time from the catalogue's published input schema.
 * The ratios compare VALIDATION ONLY on every side, each doing the same job as the generated
 * validator: the input is left untouched and a normalized copy with the defaults filled in comes
 * back, and the cross-field rule (at most 5 references) is checked. zod's parse copies by nature;
 * the ajv side copies with the same cloneJson before ajv fills defaults in place.
 * The variants run interleaved in rounds (warm-up first); each figure is the best round, since on
 * a shared machine interference only ever slows a round down.
 */
import { Ajv } from 'ajv';
import { z } from 'zod';
import { catalogue } from '../generated/catalogue.js';
import { cloneJson, countItems } from '../generated/support.js';
import { isMain, MODEL, round, TYPICAL_INPUT, type BenchOutput, type RunMode } from './support.js';

const REFERENCE_URL = /^(https:\/\/[^\s/?#]+(?:[/?#][^\s]*)?|service:\/\/a\/[A-Za-z0-9_-]{1,64})$/u;

/** family_c-2.6 reference-to-video's input, written by hand in zod: the same limits, defaults and rule. */
export const zodSchema = z
  .object({
    prompt: z.string().min(1).max(1500),
    negative_prompt: z.string().max(10000).optional(),
    aspect_ratio: z.enum(['16:9', '9:16', '1:1', '4:3', '3:4']).default('16:9'),
    duration_seconds: z.number().int().min(2).max(10).default(5),
    resolution: z.enum(['720p', '1080p']).default('720p'),
    reference_image_urls: z.array(z.string().max(2048).regex(REFERENCE_URL)).max(2).optional(),
    reference_video_urls: z.array(z.string().max(2048).regex(REFERENCE_URL)).max(3).optional(),
    seed: z.number().int().min(0).max(2147483647).optional(),
    shot_type: z.enum(['single', 'multi']).default('single'),
  })
  .strict()
  .refine((v) => countItems(v.reference_image_urls) + countItems(v.reference_video_urls) <= 5, {
    message: 'at-most-5-references',
    path: [],
  });

type Variant = () => unknown;

/** ops/s of each variant: `rounds` interleaved rounds of ~roundMs each, best round kept. */
function race(variants: Record<string, Variant>, rounds: number, roundMs: number): Record<string, number> {
  const best: Record<string, number> = {};
  let sink = 0;
  // Calibrate a batch size per variant so that checking the clock costs nothing.
  const batch: Record<string, number> = {};
  for (const [name, run] of Object.entries(variants)) {
    let n = 1000;
    for (;;) {
      const t0 = performance.now();
      for (let i = 0; i < n; i++) if (run()) sink++;
      if (performance.now() - t0 > 5 || n > 1e7) break;
      n *= 2;
    }
    batch[name] = n;
  }
  for (let r = 0; r < rounds; r++) {
    for (const [name, run] of Object.entries(variants)) {
      const n = batch[name];
      let ops = 0;
      const t0 = performance.now();
      let elapsed = 0;
      do {
        for (let i = 0; i < n; i++) if (run()) sink++;
        ops += n;
        elapsed = performance.now() - t0;
      } while (elapsed < roundMs);
      best[name] = Math.max(best[name] ?? 0, (ops * 1000) / elapsed);
    }
  }
  if (sink < 0) console.log(sink); // keeps the results alive
  return best;
}

export async function benchValidate(mode: RunMode): Promise<BenchOutput> {
  const model = catalogue.get(MODEL);
  if (!model) throw new Error(`${MODEL} is not in the catalogue`);
  const ajvValidate = new Ajv({ allErrors: true, useDefaults: true }).compile(model.info.inputSchema);
  const input = TYPICAL_INPUT as unknown as Record<string, unknown>;

  // The four must agree on the typical request before they are timed.
  const generated = model.validate(input);
  if (!generated.ok)
    throw new Error(`generated validator rejects the typical request: ${JSON.stringify(generated.errors)}`);
  const viaZod = zodSchema.safeParse(input);
  if (!viaZod.success) throw new Error(`zod rejects the typical request: ${viaZod.error.message}`);
  const viaAjv = cloneJson(input);
  if (!ajvValidate(viaAjv)) throw new Error(`ajv rejects the typical request: ${JSON.stringify(ajvValidate.errors)}`);
  for (const [name, value] of [
    ['zod', viaZod.data],
    ['ajv', viaAjv],
  ] as const) {
    if (
      JSON.stringify(value, Object.keys(generated.value).sort()) !==
      JSON.stringify(generated.value, Object.keys(generated.value).sort())
    ) {
      throw new Error(
        `${name} normalizes the typical request differently: ${JSON.stringify(value)} vs ${JSON.stringify(generated.value)}`,
      );
    }
  }
  const price = model.price(generated.value);
  // The wrong request must fail everywhere too (not timed; a sanity check of equivalence).
  const wrong = { ...input, duration_seconds: 11, reference_image_urls: ['http://insecure.example/a.png'] };
  if (model.validate(wrong).ok || zodSchema.safeParse(wrong).success || ajvValidate(cloneJson(wrong)))
    throw new Error('a variant accepts an invalid request');

  const variants: Record<string, Variant> = {
    generatedValidatePrice: () => {
      const v = model.validate(input);
      return v.ok && model.price(v.value).maxCredits > 0;
    },
    generatedValidate: () => model.validate(input).ok,
    zod: () => zodSchema.safeParse(input).success,
    ajvRuntime: () => {
      const value = cloneJson(input);
      return ajvValidate(value) && countItems(value.reference_image_urls) + countItems(value.reference_video_urls) <= 5;
    },
  };
  // Warm-up: every variant optimized before any round counts.
  race(variants, 1, mode.quick ? 150 : 400);
  const rounds = mode.quick ? 8 : 15;
  const roundMs = mode.quick ? 100 : 250;
  const ops = race(variants, rounds, roundMs);
  return {
    figures: {
      validatePriceOpsPerSec: round(ops.generatedValidatePrice, 0),
      validateOpsPerSec: round(ops.generatedValidate, 0),
      zodValidateOpsPerSec: round(ops.zod, 0),
      ajvRuntimeValidateOpsPerSec: round(ops.ajvRuntime, 0),
      validateVsZod: round(ops.generatedValidate / ops.zod, 3),
      validateVsAjvRuntime: round(ops.generatedValidate / ops.ajvRuntime, 3),
    },
    notes: [
      `validate: ${MODEL}, ${JSON.stringify(TYPICAL_INPUT).length}-byte input, priced at ${price.maxCredits} credits max; one thread; ${rounds} interleaved rounds of ${roundMs} ms after a warm-up, best round; ratios compare validation only (copy + defaults + cross-field rule on every side)`,
    ],
  };
}

if (isMain(import.meta.url)) {
  console.log(JSON.stringify(await benchValidate({ quick: process.argv.includes('--quick') })));
}
