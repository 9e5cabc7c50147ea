import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { catalogue } from '../../generated/catalogue.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';
import { bodyD, checkBalance, createTask, expectError, expectOk, MODEL_D, PRICE_D } from './helpers.js';

/**
 * A model being retired, over HTTP. The project's catalogue has no deprecated model, so this file
 * gives family_d the `deprecated` block the generator would emit for it (the shape is checked
 * against a generated temp-copy model in test/generator/deprecated-model.test.ts); the runtime
 * reads the catalogue as it always does.
 */
describe('createTask, quote and retry of a deprecated model', () => {
  let t: TestService;
  const info = catalogue.get(MODEL_D)!.info;
  const REPLACEMENT = 'vendor_c/4.0/reference-to-video';
  const deprecate = (sunset: string) => {
    info.deprecated = { sunset, replacement: REPLACEMENT };
  };
  beforeAll(async () => {
    t = await startTestService({ simulatorFailWhenPromptContains: 'FAIL-THIS-PROMPT' });
  });
  afterEach(() => {
    info.deprecated = null;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('before the sunset: accepted and held as usual, with the warning model_deprecated in the caller language', async () => {
    deprecate('2999-01-01');
    const { accountId, apiKey } = await t.account(100);
    const r = await createTask(t, apiKey, bodyD(), { headers: { 'accept-language': 'de-DE' } });
    expectOk(r, 202);
    expect(r.body.data.warnings[0]).toEqual({
      code: 'model_deprecated',
      path: 'model',
      message: `Das Modell ${MODEL_D} ist veraltet und wird ab 2999-01-01 abgelehnt. Verwenden Sie stattdessen ${REPLACEMENT}.`,
    });
    await checkBalance(t, accountId, apiKey, { available: 100 - PRICE_D, held: PRICE_D });
    const q = await t.call('POST', '/api/v1/jobs/quote', { key: apiKey, body: bodyD() });
    expectOk(q);
    expect(q.body.data.warnings.map((w: { code: string }) => w.code)).toContain('model_deprecated');
  });

  it('from the sunset: 410 41001 naming the replacement, nothing held, no task (createTask, quote, retry); a replayed Idempotency-Key keeps its task', async () => {
    const { accountId, apiKey } = await t.account(100);
    const failed = await createTask(t, apiKey, bodyD('FAIL-THIS-PROMPT, Picture 1'));
    expect((await waitForTerminal(t, apiKey, failed.body.data.taskId)).state).toBe('failed');
    const before = await createTask(t, apiKey, bodyD(), { headers: { 'idempotency-key': 'sunset-replay' } });
    expectOk(before, 202);
    deprecate('2000-01-01');

    const r = await createTask(t, apiKey, bodyD());
    expectError(r, 410, 41001);
    expect(r.body.msg).toBe(`The model ${MODEL_D} was retired on 2000-01-01. Use ${REPLACEMENT} instead.`);
    expect(r.body.data).toEqual({ param: 'model' });
    const q = await t.call('POST', '/api/v1/jobs/quote', { key: apiKey, body: bodyD() });
    expectError(q, 410, 41001);
    const retry = await t.call('POST', '/api/v1/jobs/retry', {
      key: apiKey,
      body: { taskId: failed.body.data.taskId },
    });
    expectError(retry, 410, 41001);
    // The compatible layer refuses it too, in its own error shape.
    const video = await t.call('POST', '/v1/videos', {
      key: apiKey,
      body: {
        model: MODEL_D,
        prompt: 'Picture 1 turns',
        seconds: '5',
        input_reference: { image_url: 'https://example.com/a.png' },
      },
    });
    expect(video.status).toBe(410);
    expect(video.body.error).toMatchObject({
      param: 'model',
      message: `The model ${MODEL_D} was retired on 2000-01-01. Use ${REPLACEMENT} instead.`,
    });
    // Nothing held or spent but the price of the task accepted before the sunset: still held, or
    // spent if the simulator (150 ms) has finished it meanwhile (on a slow machine it has).
    const balance = await checkBalance(t, accountId, apiKey, { available: 100 - PRICE_D });
    expect(balance.held + balance.spent).toBe(PRICE_D);
    const list = await t.call('GET', '/api/v1/jobs', { key: apiKey });
    expect(list.body.data.items.map((task: { taskId: string }) => task.taskId)).toEqual([
      before.body.data.taskId,
      failed.body.data.taskId,
    ]);

    const replay = await createTask(t, apiKey, bodyD(), { headers: { 'idempotency-key': 'sunset-replay' } });
    expectOk(replay, 202);
    expect(replay.body.data.taskId).toBe(before.body.data.taskId);
  });

  it('GET /models shows the block while it is set', async () => {
    deprecate('2999-01-01');
    const { apiKey } = await t.account(0);
    const r = await t.call('GET', `/api/v1/models/${encodeURIComponent(MODEL_D)}`, { key: apiKey });
    expectOk(r);
    expect(r.body.data.deprecated).toEqual({ sunset: '2999-01-01', replacement: REPLACEMENT });
  });
});
