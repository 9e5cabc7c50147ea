import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogue } from '../../generated/catalogue.js';
import { ROOT } from '../support/root.js';
import { NEW_MODELS } from '../support/other-modes.js';
import { startTestService, type HttpResult, type TestService } from '../support/service.js';

const FAIL = 'FAIL-THIS-PROMPT';
const CLIP = 'https://example.com/clip.mp4';
const IMAGE = 'https://example.com/frame.png';
/** The compatible layer maps input_reference onto a model's image input (runtime/compat/video-request.ts). */
const COMPAT_READY =
  existsSync(join(ROOT, 'runtime/compat/video-request.ts')) &&
  readFileSync(join(ROOT, 'runtime/compat/video-request.ts'), 'utf8').includes("'image_url'");

/** The model's accepted base input, from its generated vectors. */
function baseInput(id: string): Record<string, unknown> {
  const { cases } = JSON.parse(readFileSync(join(ROOT, 'generated/vectors', `${id}.json`), 'utf8')) as {
    cases: { name: string; input: Record<string, unknown> }[];
  };
  return cases.find((c) => c.name === 'base input accepted')!.input;
}

describe('the other modes over HTTP', () => {
  let t: TestService;
  let key: string;
  let accountId: string;
  beforeAll(async () => {
    t = await startTestService({ simulatorFailWhenPromptContains: FAIL });
    ({ apiKey: key, accountId } = await t.account(1_000_000));
  });
  afterAll(async () => {
    await t?.close();
  });

  /** createTask with wait: the finished task (200), or the error. */
  const run = (apiKey: string, model: string, input: Record<string, unknown>) =>
    t.call('POST', '/api/v1/jobs/createTask?wait=30', { key: apiKey, body: { model, input } });
  const quote = (apiKey: string, model: string, input: Record<string, unknown>) =>
    t.call('POST', '/api/v1/jobs/quote', { key: apiKey, body: { model, input } });
  const succeeded = (r: HttpResult) => {
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data).toMatchObject({ state: 'succeeded', settled: true });
    return r.body.data as {
      taskId: string;
      credits: number;
      output: { assets: { durationSeconds: number; mime: string }[] };
    };
  };
  const notFound = (r: HttpResult) => {
    expect(r.status, JSON.stringify(r.body)).toBe(404);
    expect(r.body).toMatchObject({ code: 40401 });
    return r.body.msg as string;
  };

  it('GET /models lists every new model with its prices; image-to-video has no aspect_ratio', async () => {
    const r = await t.call('GET', '/api/v1/models', { key });
    expect(r.status).toBe(200);
    const ids = (r.body.data.items as { id: string }[]).map((m) => m.id);
    for (const id of NEW_MODELS) expect(ids).toContain(id);
    expect(ids).toHaveLength(catalogue.size);
    const one = await t.call('GET', `/api/v1/models/${encodeURIComponent('vendor_d/family_d/image-to-video')}`, {
      key,
    });
    expect(one.status).toBe(200);
    expect(one.body.data).toMatchObject({ mode: 'image-to-video', pricing: { minimumFor5sCredits: 28 } });
    expect(one.body.data.inputSchema.properties.aspect_ratio).toBeUndefined();
    expect(one.body.data.inputSchema.required).toEqual(['prompt', 'image_url']);
  });

  it.each([
    // [model, input, quoted and charged credits, output seconds]
    ['vendor_d/family_d/text-to-video', { prompt: 'a fox in snow' }, 28, 5],
    ['vendor_d/family_d/image-to-video', { prompt: 'the fox turns', image_url: IMAGE, last_image_url: IMAGE }, 28, 5],
    // A URL clip: its length is measured (the simulator assumes the model's 5 s); only the new 5 s are billed.
    ['vendor_d/family_d/video-extend', { prompt: 'the fox runs on', video_url: CLIP }, 28, 10],
    // An edit of a URL clip: held at the assumed 15 s (15.12 x 15 = 226.8), settled at the measured 15 s.
    ['vendor_c/o3/video-edit', { prompt: 'make it night', video_url: CLIP }, 227, 15],
  ])('%s is quoted, completes through createTask and is charged', async (model, input, credits, seconds) => {
    const q = await quote(key, model, input);
    expect(q.status, JSON.stringify(q.body)).toBe(200);
    expect(q.body.data).toMatchObject({ estimatedCredits: credits, maxCredits: credits });
    const done = succeeded(await run(key, model, input));
    expect(done.credits).toBe(credits);
    expect(done.output.assets[0]).toMatchObject({ mime: 'video/mp4', durationSeconds: seconds });
  });

  it.each(NEW_MODELS.map((id) => [id]))('%s completes from its base input at the quoted price', async (id) => {
    const input = baseInput(id);
    const q = await quote(key, id, input);
    expect(q.status, JSON.stringify(q.body)).toBe(200);
    const done = succeeded(await run(key, id, input));
    expect(done.credits).toBe(q.body.data.estimatedCredits);
  });

  it('rejects aspect_ratio on image-to-video and last_image_url without image_url, naming field and rule', async () => {
    const model = 'vendor_b/family_c-2.6/image-to-video';
    const shape = await run(key, model, { prompt: 'x', image_url: IMAGE, aspect_ratio: '16:9' });
    expect(shape.status).toBe(400);
    expect(shape.body.data.errors).toEqual([
      expect.objectContaining({ path: 'input.aspect_ratio', rule: 'unknown_field' }),
    ]);
    const closing = await run(key, model, { prompt: 'x', last_image_url: IMAGE });
    expect(closing.status).toBe(400);
    expect(closing.body.data.errors).toEqual([expect.objectContaining({ path: 'input.image_url', rule: 'required' })]);
  });

  describe('a clip named by task id', () => {
    let source: { taskId: string; credits: number };

    beforeAll(async () => {
      source = succeeded(
        await run(key, 'vendor_d/family_d/text-to-video', { prompt: 'a fox in snow', duration_seconds: 7 }),
      );
      expect(source.credits).toBe(39); // 5.55 x 7 = 38.85
    });

    it('video-extend of a finished task of the same key: the output is the clip plus the new segment, only the segment billed', async () => {
      const input = { prompt: 'the fox runs on', video_url: source.taskId, duration_seconds: 5 };
      const q = await quote(key, 'vendor_d/family_d/video-extend', input);
      expect(q.body.data).toMatchObject({ estimatedCredits: 28, maxCredits: 28, breakdown: { billableSeconds: 5 } });
      const done = succeeded(await run(key, 'vendor_d/family_d/video-extend', input));
      expect(done.output.assets[0].durationSeconds).toBe(12);
      expect(done.credits).toBe(28);
      // Extending the extension: 12 s + 4 s.
      const again = succeeded(
        await run(key, 'vendor_d/family_d/video-extend', {
          prompt: 'and stops',
          video_url: done.taskId,
          duration_seconds: 4,
        }),
      );
      expect(again.output.assets[0].durationSeconds).toBe(16);
    });

    it('video-extend with -1 of a task: settled at the measured new segment (the joined output minus the clip)', async () => {
      const done = succeeded(
        await run(key, 'vendor_a/family_a-2.0-mini/video-extend', {
          prompt: 'on',
          video_url: source.taskId,
          duration_seconds: -1,
        }),
      );
      const segment = done.output.assets[0].durationSeconds - 7;
      expect(segment).toBeGreaterThanOrEqual(4);
      expect(segment).toBeLessThanOrEqual(15);
      expect(done.credits).toBe(Math.ceil((794 * segment) / 100)); // 7.94 credits/s at 720p without a reference video
    });

    it('video-edit of a finished 7 s task: held, quoted and charged for 7 s, and 7 s long', async () => {
      const input = { prompt: 'make it night', video_url: source.taskId };
      const q = await quote(key, 'vendor_c/o3/video-edit', input);
      expect(q.body.data).toMatchObject({
        estimatedCredits: 106,
        maxCredits: 106,
        breakdown: { billableSeconds: 7, maxBillableSeconds: 7 },
      }); // 15.12 x 7
      const done = succeeded(await run(key, 'vendor_c/o3/video-edit', input));
      expect(done.credits).toBe(106);
      expect(done.output.assets[0].durationSeconds).toBe(7);
      await t.checkLedger(accountId);
    });

    it("another key's task, another account's task, a failed task and an unknown id are the same 404", async () => {
      const sibling = await t.siblingKey(accountId);
      const other = await t.account(1000);
      const stranger = other.apiKey;
      const failed = await run(key, 'vendor_d/family_d/text-to-video', { prompt: `a fox ${FAIL}` });
      expect(failed.body.data.state).toBe('failed');
      const extend = (apiKey: string, videoUrl: string) =>
        run(apiKey, 'vendor_d/family_d/video-extend', { prompt: 'on', video_url: videoUrl });
      const messages = [
        notFound(await extend(sibling, source.taskId)),
        notFound(await extend(stranger, source.taskId)),
        notFound(await extend(key, failed.body.data.taskId)),
        notFound(await extend(key, 'task_doesnotexist0000')),
        notFound(await quote(sibling, 'vendor_c/o3/video-edit', { prompt: 'x', video_url: source.taskId })),
      ];
      expect(new Set(messages).size).toBe(1);
      const sameKey = await run(key, 'vendor_d/family_d/video-extend', { prompt: 'on', video_url: source.taskId });
      expect(sameKey.status).toBe(200);
      // Nothing was held or charged for the refused requests.
      expect(await t.wallet(other.accountId)).toMatchObject({ available: 1000, held: 0, spent: 0 });
      expect((await t.wallet(accountId)).held).toBe(0);
    });
  });

  it.skipIf(!COMPAT_READY)(
    'image-to-video completes through POST /v1/videos with input_reference {image_url}',
    async () => {
      const model = 'vendor_d/family_d/image-to-video';
      const created = await t.call('POST', '/v1/videos', {
        key,
        body: { model, prompt: 'the photo comes alive', seconds: '5', input_reference: { image_url: IMAGE } },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      expect(created.body).toMatchObject({ object: 'video', model, seconds: '5' });
      let video = created.body;
      for (let i = 0; i < 200 && video.status !== 'completed' && video.status !== 'failed'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        video = (await t.call('GET', `/v1/videos/${video.id}`, { key })).body;
      }
      expect(video.status).toBe('completed');
      // The same task through the main API: charged as family_d image-to-video, 5 s at 768p.
      const record = await t.call('GET', `/api/v1/jobs/recordInfo?taskId=${video.id}`, { key });
      expect(record.body.data).toMatchObject({ model, state: 'succeeded', credits: 28 });
    },
  );
});
