import { describe, expect, it } from 'vitest';
import { failTask, succeedTask } from '../../runtime/tasks/resolve-task.js';
import { waitForTerminal } from '../support/service.js';
import { failingAndSlowServicesForSuite, serviceForSuite } from '../support/suite-service.js';
import { bodyD, checkBalance, createTask, expectOk, MODEL_D, PRICE_D, recordInfo, usd, bodyMini } from './helpers.js';

const FAIL = 'FAIL-THIS-PROMPT';

/** The rows of the specification's state table that end a task: succeeded, failed, expired. */
describe('task lifecycle', () => {
  const suite = failingAndSlowServicesForSuite(FAIL);

  describe('(none) -> queued: createTask accepted', () => {
    it('answers 202 with the task queued, Location, Retry-After, no-store, rate-limit headers and the request id, and holds the price', async () => {
      const { accountId, apiKey } = await suite.slow.account(100);
      await checkBalance(suite.slow, accountId, apiKey, { available: 100, held: 0, total: 100 });
      const r = await createTask(suite.slow, apiKey, bodyD());
      expectOk(r, 202);
      const task = r.body.data;
      expect(task).toMatchObject({
        model: MODEL_D,
        state: 'queued',
        settled: false,
        credits: PRICE_D,
        cost: usd(PRICE_D),
        maxCredits: PRICE_D,
      });
      expect(task.taskId).toMatch(/\S/);
      expect(r.headers.get('location')).toBe(`/api/v1/jobs/recordInfo?taskId=${encodeURIComponent(task.taskId)}`);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(r.headers.get('cache-control')).toBe('no-store');
      expect(Number(r.headers.get('x-ratelimit-limit'))).toBeGreaterThan(0);
      expect(r.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
      expect(r.headers.get('x-request-id')).toBe(r.body.request_id);
      // While the task is open its full price is held, not charged.
      await checkBalance(suite.slow, accountId, apiKey, {
        available: 100 - PRICE_D,
        held: PRICE_D,
        total: 100,
        spent: 0,
      });
      // The Location header leads to the task, still open.
      const viaLocation = await suite.slow.call('GET', r.headers.get('location')!, { key: apiKey });
      expectOk(viaLocation);
      expect(viaLocation.body.data).toMatchObject({ taskId: task.taskId, settled: false, output: null });
      expect(['queued', 'running']).toContain(viaLocation.body.data.state);
      expect(viaLocation.headers.get('cache-control')).toBe('no-store');
    });
  });

  describe('running -> succeeded', () => {
    it('settles the hold to the price and returns a downloadable MP4', async () => {
      const { accountId, apiKey } = await suite.t.account(100);
      const r = await createTask(suite.t, apiKey, bodyD());
      expectOk(r, 202);
      const done = await waitForTerminal(suite.t, apiKey, r.body.data.taskId);
      expect(done).toMatchObject({
        state: 'succeeded',
        settled: true,
        credits: PRICE_D,
        cost: usd(PRICE_D),
        model: MODEL_D,
        progress: 100,
      });
      expect(done.errorCode).toBeUndefined();
      expect(done.output.assets).toHaveLength(1);
      const asset = done.output.assets[0];
      expect(asset).toMatchObject({ url: expect.any(String), mime: 'video/mp4', durationSeconds: 5 });
      await checkBalance(suite.t, accountId, apiKey, {
        available: 100 - PRICE_D,
        held: 0,
        spent: PRICE_D,
        total: 100 - PRICE_D,
      });

      const media = await fetch(asset.url);
      expect(media.status).toBe(200);
      expect(media.headers.get('content-type')).toBe('video/mp4');
      const bytes = Buffer.from(await media.arrayBuffer());
      expect(bytes.length).toBeGreaterThan(100);
      expect(bytes.includes(Buffer.from('ftyp'))).toBe(true);
    });

    it('refuses an altered media link with 403', async () => {
      const { apiKey } = await suite.t.account(100);
      const r = await createTask(suite.t, apiKey, bodyD());
      const done = await waitForTerminal(suite.t, apiKey, r.body.data.taskId);
      const url = new URL(done.output.assets[0].url);
      url.searchParams.set('sig', 'x'.repeat(43));
      const media = await fetch(url);
      expect(media.status).toBe(403);
    });
  });

  describe('queued or running -> failed', () => {
    it.each([
      ['no Accept-Language', {}],
      ['Accept-Language de', { 'accept-language': 'de' }],
    ])(
      'releases the hold; errorMessage is the English model reason without the task id (%s)',
      async (_name, headers) => {
        const { accountId, apiKey } = await suite.t.account(100);
        const r = await createTask(suite.t, apiKey, bodyD(`a storm at sea ${FAIL}`), { headers });
        expectOk(r, 202);
        const taskId = r.body.data.taskId;
        await waitForTerminal(suite.t, apiKey, taskId);
        const read = await recordInfo(suite.t, apiKey, taskId, headers);
        expectOk(read);
        const task = read.body.data;
        expect(task).toMatchObject({
          state: 'failed',
          errorCode: 'generation_failed',
          credits: 0,
          cost: '0.00',
          settled: true,
          output: null,
        });
        expect(task.errorMessage).toMatch(/^Content policy violation/);
        expect(task.errorMessage).not.toContain(taskId);
        expect(task.errorMessage).not.toMatch(/task_[A-Za-z0-9]/);
        await checkBalance(suite.t, accountId, apiKey, { available: 100, held: 0, spent: 0, total: 100 });
      },
    );
  });

  describe('duration_seconds -1 (the model chooses)', () => {
    const body = bodyMini(-1);
    // 720p with no reference video: 7.94 credits/s; the hold covers the longest clip (15 s).
    const rateHundredths = 794;
    const maxCredits = Math.ceil((rateHundredths * 15) / 100);

    it('holds the price of 15 s while the task is open', async () => {
      const { accountId, apiKey } = await suite.slow.account(500);
      const r = await createTask(suite.slow, apiKey, body);
      expectOk(r, 202);
      expect(r.body.data).toMatchObject({ state: 'queued', maxCredits, credits: maxCredits, settled: false });
      await checkBalance(suite.slow, accountId, apiKey, { available: 500 - maxCredits, held: maxCredits, total: 500 });
    });

    it('settles to the chosen length and gives back the difference', async () => {
      const { accountId, apiKey } = await suite.t.account(500);
      const r = await createTask(suite.t, apiKey, body);
      expectOk(r, 202);
      const accepted = r.body.data;
      expect(accepted.maxCredits).toBe(maxCredits);

      const done = await waitForTerminal(suite.t, apiKey, accepted.taskId);
      expect(done.state).toBe('succeeded');
      const seconds = done.output.assets[0].durationSeconds;
      expect(seconds).toBeGreaterThanOrEqual(4);
      expect(seconds).toBeLessThanOrEqual(15);
      expect(done.credits).toBe(Math.ceil((rateHundredths * seconds) / 100));
      expect(done.credits).toBeLessThanOrEqual(maxCredits);
      // The difference between hold and charge is available again.
      await checkBalance(suite.t, accountId, apiKey, {
        available: 500 - done.credits,
        held: 0,
        spent: done.credits,
        total: 500 - done.credits,
      });
    });
  });
});

describe('queued or running -> expired: the deadline passes', () => {
  const svc = serviceForSuite(undefined, { taskDeadlineMs: 400, simulatorLatencyMs: 120_000 });

  it.each([
    ['en', undefined, 'The task did not finish before its deadline; the held credits were released.'],
    [
      'de',
      'de',
      'Die Aufgabe wurde nicht vor Ablauf ihrer Frist abgeschlossen; die reservierten Credits wurden freigegeben.',
    ],
    ['fr-FR', 'fr-FR', "La tâche ne s'est pas terminée avant son échéance ; les crédits réservés ont été libérés."],
  ])(
    'releases the hold and reports deadline_exceeded in the caller language (%s)',
    async (_name, language, message) => {
      const { accountId, apiKey } = await svc.t.account(100);
      const r = await createTask(svc.t, apiKey, bodyD());
      expectOk(r, 202);
      const taskId = r.body.data.taskId;
      await waitForTerminal(svc.t, apiKey, taskId);
      const read = await recordInfo(svc.t, apiKey, taskId, language ? { 'accept-language': language } : undefined);
      expectOk(read);
      expect(read.body.data).toMatchObject({
        state: 'expired',
        errorCode: 'deadline_exceeded',
        errorMessage: message,
        credits: 0,
        settled: true,
        output: null,
      });
      await checkBalance(svc.t, accountId, apiKey, { available: 100, held: 0, spent: 0, total: 100 });
    },
  );

  it('resolves once: a late result after expiry settles nothing', async () => {
    const { accountId, apiKey } = await svc.t.account(100);
    const r = await createTask(svc.t, apiKey, bodyD());
    const taskId = r.body.data.taskId;
    const expired = await waitForTerminal(svc.t, apiKey, taskId);
    expect(expired.state).toBe('expired');
    // What a deployment's late answer would do: neither a success nor a failure applies any more.
    expect(await succeedTask(svc.t.service.ctx, taskId, { outputs: [], outputSeconds: 5 })).toBe(false);
    expect(await failTask(svc.t.service.ctx, taskId, 'generation_failed', 'late')).toBe(false);
    const read = await recordInfo(svc.t, apiKey, taskId);
    expect(read.body.data).toEqual({ ...expired, output: null });
    await checkBalance(svc.t, accountId, apiKey, { available: 100, held: 0, spent: 0, total: 100 });
  });
});
