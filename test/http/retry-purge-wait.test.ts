import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';
import { bodyD, checkBalance, createTask, expectError, expectOk, PRICE_D, recordInfo } from './helpers.js';

const FAIL = 'FAIL-THIS-PROMPT';

/** The rows of the state table for retry, purge and the `wait` budget. */
describe('retry, purge and wait', () => {
  let t: TestService;
  /** Tasks run 5 s here: longer than a wait of 1 s, long enough to be caught unfinished. */
  let slow: TestService;
  /** Tasks expire after 400 ms here. */
  let expiring: TestService;
  /** No service-wide retention limit here (0: content is kept until purged). */
  let keepForever: TestService;
  beforeAll(async () => {
    [t, slow, expiring, keepForever] = await Promise.all([
      startTestService({ simulatorFailWhenPromptContains: FAIL }),
      startTestService({ simulatorLatencyMs: 5_000 }),
      startTestService({ taskDeadlineMs: 400, simulatorLatencyMs: 120_000 }),
      startTestService({ retentionSeconds: 0 }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([t?.close(), slow?.close(), expiring?.close(), keepForever?.close()]);
  });

  /** Polls recordInfo (bounded) until the task's content has been purged. */
  async function waitForPurge(s: TestService, key: string, taskId: string) {
    const until = Date.now() + 20_000;
    for (;;) {
      const r = await recordInfo(s, key, taskId);
      if (r.body.data.purgedAt !== null) return r.body.data;
      if (Date.now() > until) throw new Error(`task ${taskId} not purged: ${JSON.stringify(r.body)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  describe('retry', () => {
    it('of a failed task: a new queued task, the source unchanged, priced and held again', async () => {
      const { accountId, apiKey } = await t.account(100);
      const created = await createTask(t, apiKey, bodyD(`waves ${FAIL}`));
      const source = await waitForTerminal(t, apiKey, created.body.data.taskId);
      expect(source.state).toBe('failed');
      await checkBalance(t, accountId, apiKey, { available: 100, held: 0 });

      const r = await t.call('POST', '/api/v1/jobs/retry', { key: apiKey, body: { taskId: source.taskId } });
      expectOk(r, 200);
      const retry = r.body.data;
      expect(retry.taskId).not.toBe(source.taskId);
      expect(retry).toMatchObject({
        state: 'queued',
        retryOf: source.taskId,
        model: source.model,
        maxCredits: PRICE_D,
        credits: PRICE_D,
        settled: false,
      });
      expect(r.headers.get('cache-control')).toBe('no-store');
      await checkBalance(t, accountId, apiKey);

      const after = await recordInfo(t, apiKey, source.taskId);
      expect(after.body.data).toEqual(source);
      expect(after.body.data.state).toBe('failed');
      // The same prompt fails again: the retry ran everything anew and released its own hold.
      const done = await waitForTerminal(t, apiKey, retry.taskId);
      expect(done.state).toBe('failed');
      await checkBalance(t, accountId, apiKey, { available: 100, held: 0, spent: 0 });
    });

    it('of an expired task: a new queued task, the source stays expired', async () => {
      const { accountId, apiKey } = await expiring.account(100);
      const created = await createTask(expiring, apiKey, bodyD());
      const source = await waitForTerminal(expiring, apiKey, created.body.data.taskId);
      expect(source.state).toBe('expired');
      await checkBalance(expiring, accountId, apiKey, { available: 100, held: 0 });

      const r = await expiring.call('POST', '/api/v1/jobs/retry', { key: apiKey, body: { taskId: source.taskId } });
      expectOk(r, 200);
      expect(r.body.data).toMatchObject({ state: 'queued', retryOf: source.taskId, credits: PRICE_D });
      expect(r.body.data.taskId).not.toBe(source.taskId);
      await checkBalance(expiring, accountId, apiKey);
      expect((await recordInfo(expiring, apiKey, source.taskId)).body.data).toMatchObject({
        state: 'expired',
        errorCode: 'deadline_exceeded',
        credits: 0,
      });
      expect((await waitForTerminal(expiring, apiKey, r.body.data.taskId)).state).toBe('expired');
      await checkBalance(expiring, accountId, apiKey, { available: 100, held: 0, spent: 0 });
    });

    it('is priced and admitted again: 402 40201 once the balance no longer covers it', async () => {
      const { accountId, apiKey } = await t.account(PRICE_D);
      const failed = await createTask(t, apiKey, bodyD(`hail ${FAIL}`), { query: 'wait=30' });
      expect(failed.body.data.state).toBe('failed');
      const spent = await createTask(t, apiKey, bodyD('spends the whole balance'), { query: 'wait=30' });
      expect(spent.body.data.state).toBe('succeeded');
      await checkBalance(t, accountId, apiKey, { available: 0, held: 0, spent: PRICE_D });
      expectError(
        await t.call('POST', '/api/v1/jobs/retry', { key: apiKey, body: { taskId: failed.body.data.taskId } }),
        402,
        40201,
      );
      await checkBalance(t, accountId, apiKey, { available: 0, held: 0, spent: PRICE_D });
    });

    it('of a succeeded task is 400 40007 and moves no money', async () => {
      const { accountId, apiKey } = await t.account(100);
      const created = await createTask(t, apiKey, bodyD());
      const source = await waitForTerminal(t, apiKey, created.body.data.taskId);
      expect(source.state).toBe('succeeded');
      const before = await checkBalance(t, accountId, apiKey);
      expectError(
        await t.call('POST', '/api/v1/jobs/retry', { key: apiKey, body: { taskId: source.taskId } }),
        400,
        40007,
      );
      expect(await checkBalance(t, accountId, apiKey)).toEqual(before);
    });

    it.each([
      ['a sibling key of the same account', 'sibling'],
      ['another account', 'other'],
      ['an unknown id', 'unknown'],
    ])('of a task seen from %s is 404 40401', async (_name, who) => {
      const owner = await t.account(100);
      const created = await createTask(t, owner.apiKey, bodyD(`fog ${FAIL}`));
      const source = await waitForTerminal(t, owner.apiKey, created.body.data.taskId);
      expect(source.state).toBe('failed');
      const key =
        who === 'sibling'
          ? await t.siblingKey(owner.accountId)
          : who === 'other'
            ? (await t.account(100)).apiKey
            : owner.apiKey;
      const taskId = who === 'unknown' ? 'task_doesnotexist0000' : source.taskId;
      const r = await t.call('POST', '/api/v1/jobs/retry', { key, body: { taskId } });
      expectError(r, 404, 40401);
      await checkBalance(t, owner.accountId, owner.apiKey, { available: 100, held: 0 });
    });
  });

  describe('purge', () => {
    it('of a finished task destroys the content, keeps the billing evidence and is idempotent', async () => {
      const { accountId, apiKey } = await t.account(100);
      const created = await createTask(t, apiKey, bodyD('a secret prompt nobody may keep'));
      const done = await waitForTerminal(t, apiKey, created.body.data.taskId);
      expect(done.state).toBe('succeeded');
      const mediaUrl = done.output.assets[0].url;
      expect((await fetch(mediaUrl)).status).toBe(200);
      const before = await checkBalance(t, accountId, apiKey, { spent: PRICE_D });

      const r = await t.call('POST', '/api/v1/jobs/purge', { key: apiKey, body: { taskId: done.taskId } });
      expectOk(r, 200);
      expect(r.body.data).toMatchObject({ taskId: done.taskId, billingRetained: true });
      const purgedAt = r.body.data.purgedAt;
      expect(Number.isNaN(Date.parse(purgedAt))).toBe(false);

      const read = await recordInfo(t, apiKey, done.taskId);
      expectOk(read);
      expect(read.body.data).toMatchObject({
        taskId: done.taskId,
        model: done.model,
        state: 'succeeded',
        input: null,
        output: null,
        purgedAt,
        credits: done.credits,
        cost: done.cost,
        settled: true,
        requestId: done.requestId,
        createdAt: done.createdAt,
        finishedAt: done.finishedAt,
      });
      expect(JSON.stringify(read.body)).not.toContain('secret prompt');

      const again = await t.call('POST', '/api/v1/jobs/purge', { key: apiKey, body: { taskId: done.taskId } });
      expectOk(again, 200);
      expect(again.body.data).toMatchObject({ purgedAt, billingRetained: true });

      expect([403, 404]).toContain((await fetch(mediaUrl)).status);
      expect(await checkBalance(t, accountId, apiKey)).toEqual(before);
    });

    it('of a failed task is allowed as well', async () => {
      const { apiKey } = await t.account(100);
      const created = await createTask(t, apiKey, bodyD(`rain ${FAIL}`));
      const done = await waitForTerminal(t, apiKey, created.body.data.taskId);
      const r = await t.call('POST', '/api/v1/jobs/purge', { key: apiKey, body: { taskId: done.taskId } });
      expectOk(r, 200);
      expect((await recordInfo(t, apiKey, done.taskId)).body.data).toMatchObject({
        state: 'failed',
        errorCode: 'generation_failed',
        input: null,
      });
    });

    it('of a queued or running task is 400 40006 and changes nothing', async () => {
      const { accountId, apiKey } = await slow.account(100);
      const created = await createTask(slow, apiKey, bodyD());
      expectOk(created, 202);
      const taskId = created.body.data.taskId;
      const r = await slow.call('POST', '/api/v1/jobs/purge', { key: apiKey, body: { taskId } });
      expectError(r, 400, 40006);
      await checkBalance(slow, accountId, apiKey);
      const done = await waitForTerminal(slow, apiKey, taskId, 25_000);
      expect(done).toMatchObject({ state: 'succeeded', purgedAt: null });
      expect(done.input).not.toBeNull();
      await checkBalance(slow, accountId, apiKey, { held: 0, spent: PRICE_D });
    });

    it("of another key's task is 404 40401", async () => {
      const owner = await t.account(100);
      const created = await createTask(t, owner.apiKey, bodyD());
      const done = await waitForTerminal(t, owner.apiKey, created.body.data.taskId);
      const sibling = await t.siblingKey(owner.accountId);
      expectError(
        await t.call('POST', '/api/v1/jobs/purge', { key: sibling, body: { taskId: done.taskId } }),
        404,
        40401,
      );
      expect((await recordInfo(t, owner.apiKey, done.taskId)).body.data.purgedAt).toBeNull();
    });
  });

  describe('X-Service-Retention', () => {
    it.each([
      ['with the default service retention', 'default'],
      ['with no service retention limit', 'keepForever'],
    ])(
      'purges the content no sooner than the given seconds after the task ends, keeping billing (%s)',
      async (_name, which) => {
        const s = which === 'default' ? t : keepForever;
        const { accountId, apiKey } = await s.account(100);
        const r = await createTask(s, apiKey, bodyD('kept for two seconds only'), {
          headers: { 'x-service-retention': '2' },
        });
        expectOk(r, 202);
        const done = await waitForTerminal(s, apiKey, r.body.data.taskId);
        expect(done.state).toBe('succeeded');
        const purged = await waitForPurge(s, apiKey, done.taskId);
        expect(Date.parse(purged.purgedAt) - Date.parse(done.finishedAt)).toBeGreaterThanOrEqual(2_000);
        expect(purged).toMatchObject({
          state: 'succeeded',
          input: null,
          output: null,
          credits: PRICE_D,
          settled: true,
        });
        expect([403, 404]).toContain((await fetch(done.output.assets[0].url)).status);
        await checkBalance(s, accountId, apiKey, { held: 0, spent: PRICE_D, available: 100 - PRICE_D });
      },
    );

    it.each([['abc'], ['0'], ['-1'], ['1.5']])('%s is 400 40008 with nothing held', async (value) => {
      const { accountId, apiKey } = await t.account(100);
      const r = await createTask(t, apiKey, bodyD(), { headers: { 'x-service-retention': value } });
      expectError(r, 400, 40008);
      expect(r.body.data).toEqual({ param: 'X-Service-Retention' });
      await checkBalance(t, accountId, apiKey, { available: 100, held: 0 });
    });
  });

  describe('wait', () => {
    it('a client that disconnects stops only its wait: the task runs on and is billed', async () => {
      const { accountId, apiKey } = await slow.account(100);
      const controller = new AbortController();
      const pending = fetch(`${slow.url}/api/v1/jobs/createTask?wait=30`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(bodyD('abandoned by its client')),
        signal: controller.signal,
      }).catch((error: Error) => error);
      // Once the task exists, the client goes away.
      let taskId: string | undefined;
      const until = Date.now() + 20_000;
      while (!taskId && Date.now() < until) {
        taskId = (await slow.call('GET', '/api/v1/jobs', { key: apiKey })).body.data.items[0]?.taskId;
        if (!taskId) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(taskId).toBeDefined();
      controller.abort();
      expect(await pending).toBeInstanceOf(Error);
      const done = await waitForTerminal(slow, apiKey, taskId!, 25_000);
      expect(done).toMatchObject({ state: 'succeeded', credits: PRICE_D });
      await checkBalance(slow, accountId, apiKey, { held: 0, spent: PRICE_D, available: 100 - PRICE_D });
    });

    it('ends with the ordinary 202 when the budget runs out first', async () => {
      const { accountId, apiKey } = await slow.account(100);
      const r = await createTask(slow, apiKey, bodyD(), { query: 'wait=1' });
      expectOk(r, 202);
      expect(['queued', 'running']).toContain(r.body.data.state);
      expect(r.headers.get('location')).toContain(encodeURIComponent(r.body.data.taskId));
      expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
      await checkBalance(slow, accountId, apiKey, { held: PRICE_D, available: 100 - PRICE_D });
      await waitForTerminal(slow, apiKey, r.body.data.taskId, 25_000);
      await checkBalance(slow, accountId, apiKey, { held: 0, spent: PRICE_D });
    });

    it.each([
      ['a task that succeeds', 'wait=30', 'a lighthouse at dusk', 'succeeded'],
      ['a task that fails', 'wait=30', `a lighthouse ${FAIL}`, 'failed'],
      ['wait above 60 (clamped)', 'wait=999', 'a lighthouse at dawn', 'succeeded'],
    ])('returns 200 with the terminal record for %s', async (_name, query, prompt, state) => {
      const { accountId, apiKey } = await t.account(100);
      const r = await createTask(t, apiKey, bodyD(prompt), { query });
      expectOk(r, 200);
      expect(r.body.data.state).toBe(state);
      expect(r.body.data.settled).toBe(true);
      expect(r.headers.get('cache-control')).toBe('no-store');
      if (state === 'succeeded') expect(r.body.data.output.assets[0].mime).toBe('video/mp4');
      const read = await recordInfo(t, apiKey, r.body.data.taskId);
      expect(read.body.data).toMatchObject({ state, credits: r.body.data.credits });
      const spent = state === 'succeeded' ? PRICE_D : 0;
      await checkBalance(t, accountId, apiKey, { held: 0, spent, available: 100 - spent });
    });

    // The task takes 150 ms: a wait that was honoured would answer 200 with the finished task.
    it.each([['wait=abc'], ['wait=0'], ['wait=-5'], ['wait=1.5'], ['wait=']])(
      'ignores %s: the ordinary 202 with the task queued',
      async (query) => {
        const { accountId, apiKey } = await t.account(100);
        const r = await createTask(t, apiKey, bodyD(), { query });
        expectOk(r, 202);
        expect(r.body.data.state).toBe('queued');
        await checkBalance(t, accountId, apiKey);
        await waitForTerminal(t, apiKey, r.body.data.taskId);
        await checkBalance(t, accountId, apiKey, { held: 0, spent: PRICE_D });
      },
    );
  });
});
