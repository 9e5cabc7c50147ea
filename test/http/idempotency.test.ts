import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../runtime/clock.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';
import { bodyD, checkBalance, createTask, expectError, expectOk, PRICE_D } from './helpers.js';

const FAIL = 'FAIL-THIS-PROMPT';
const idem = (key: string) => ({ 'idempotency-key': key });

async function holdsOf(t: TestService, accountId: string) {
  return t.service.ctx.db.kysely.selectFrom('holds').selectAll().where('account_id', '=', accountId).execute();
}

describe('Idempotency-Key', () => {
  let t: TestService;
  /** Tasks never finish during a test here, so a second hold would show. */
  let slow: TestService;
  beforeAll(async () => {
    [t, slow] = await Promise.all([
      startTestService({ simulatorFailWhenPromptContains: FAIL }),
      startTestService({ simulatorLatencyMs: 600_000, webhookAllowPrivate: true, webhookAllowInsecure: true }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([t?.close(), slow?.close()]);
  });

  describe('createTask', () => {
    it('replays the same request as the original task with no second hold', async () => {
      const { accountId, apiKey } = await slow.account(100);
      const first = await createTask(slow, apiKey, bodyD(), { headers: idem('order-1') });
      expectOk(first, 202);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      await checkBalance(slow, accountId, apiKey, { available: 100 - PRICE_D, held: PRICE_D });

      const again = await createTask(slow, apiKey, bodyD(), { headers: idem('order-1') });
      expectOk(again, 202);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body.data.taskId).toBe(first.body.data.taskId);
      expect(again.body.request_id).not.toBe(first.body.request_id);
      await checkBalance(slow, accountId, apiKey, { available: 100 - PRICE_D, held: PRICE_D });
      expect(await holdsOf(slow, accountId)).toHaveLength(1);
      expect((await slow.call('GET', '/api/v1/jobs', { key: apiKey })).body.data.items).toHaveLength(1);
    });

    it('compares the normalized request: defaults spelled out are the same request', async () => {
      const { accountId, apiKey } = await slow.account(100);
      const first = await createTask(slow, apiKey, bodyD(), { headers: idem('normalized') });
      const spelled = await createTask(
        slow,
        apiKey,
        bodyD(undefined, { resolution: '768p', duration_seconds: 5, aspect_ratio: '16:9' }),
        { headers: idem('normalized') },
      );
      expectOk(spelled, 202);
      expect(spelled.body.data.taskId).toBe(first.body.data.taskId);
      await checkBalance(slow, accountId, apiKey, { held: PRICE_D });
    });

    it('returns the original task in its current state once it has finished', async () => {
      const { accountId, apiKey } = await t.account(100);
      const first = await createTask(t, apiKey, bodyD(), { headers: idem('finished-then-replayed') });
      const done = await waitForTerminal(t, apiKey, first.body.data.taskId);
      expect(done.state).toBe('succeeded');
      const again = await createTask(t, apiKey, bodyD(), { headers: idem('finished-then-replayed') });
      expect(again.body.data).toMatchObject({
        taskId: done.taskId,
        state: 'succeeded',
        settled: true,
        credits: PRICE_D,
      });
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      await checkBalance(t, accountId, apiKey, { available: 100 - PRICE_D, held: 0, spent: PRICE_D });
    });

    it.each([
      ['another prompt', bodyD('a different prompt')],
      ['another duration', bodyD(undefined, { duration_seconds: 6 })],
      // Loopback only (test switches on): a test never aims the service at an outside address.
      ['a callback URL added', { ...bodyD(), callBackUrl: 'http://127.0.0.1:9/hook' }],
    ])('answers 409 40902 for the same key with %s, holding nothing more', async (_name, body) => {
      const { accountId, apiKey } = await slow.account(100);
      const first = await createTask(slow, apiKey, bodyD(), { headers: idem('same-key') });
      expectOk(first, 202);
      const r = await createTask(slow, apiKey, body, { headers: idem('same-key') });
      expectError(r, 409, 40902);
      await checkBalance(slow, accountId, apiKey, { available: 100 - PRICE_D, held: PRICE_D });
    });

    it('answers 409 40903 to a sibling key reusing the key, without revealing the task id', async () => {
      const { accountId, apiKey } = await slow.account(100);
      const first = await createTask(slow, apiKey, bodyD(), { headers: idem('shared-key') });
      const sibling = await slow.siblingKey(accountId);
      const response = await fetch(`${slow.url}/api/v1/jobs/createTask`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${sibling}`,
          'content-type': 'application/json',
          'idempotency-key': 'shared-key',
        },
        body: JSON.stringify(bodyD()),
      });
      const text = await response.text();
      expect(response.status).toBe(409);
      expect(JSON.parse(text).code).toBe(40903);
      expect(text).not.toContain(first.body.data.taskId);
      expect(text).not.toContain('task_');
      expect(response.headers.get('location')).toBeNull();
      await checkBalance(slow, accountId, apiKey, { available: 100 - PRICE_D, held: PRICE_D });
    });

    it('is scoped per account: another account may use the same key', async () => {
      const a = await slow.account(100);
      const b = await slow.account(100);
      const first = await createTask(slow, a.apiKey, bodyD(), { headers: idem('common-name') });
      const second = await createTask(slow, b.apiKey, bodyD(), { headers: idem('common-name') });
      expectOk(second, 202);
      expect(second.body.data.taskId).not.toBe(first.body.data.taskId);
      expect(second.headers.get('idempotent-replayed')).toBeNull();
      await checkBalance(slow, b.accountId, b.apiKey, { held: PRICE_D });
    });

    it.each([
      ['300 characters', 'k'.repeat(300)],
      ['a space inside', 'has space'],
      ['empty', ''],
    ])('answers 400 40014 to a malformed key (%s)', async (_name, key) => {
      const { accountId, apiKey } = await slow.account(100);
      expectError(await createTask(slow, apiKey, bodyD(), { headers: idem(key) }), 400, 40014);
      await checkBalance(slow, accountId, apiKey, { available: 100, held: 0 });
    });

    it('accepts a key of 255 visible characters', async () => {
      const { apiKey } = await slow.account(100);
      expectOk(await createTask(slow, apiKey, bodyD(), { headers: idem('k'.repeat(255)) }), 202);
    });
  });

  describe('retry', () => {
    async function failedTask(accountKey: string, prompt: string) {
      const r = await createTask(t, accountKey, bodyD(`${prompt} ${FAIL}`));
      const done = await waitForTerminal(t, accountKey, r.body.data.taskId);
      expect(done.state).toBe('failed');
      return done.taskId as string;
    }

    it('is scoped to the source task: a replay returns the same retry, another source gets its own', async () => {
      const { accountId, apiKey } = await t.account(200);
      const sourceA = await failedTask(apiKey, 'first');
      const sourceB = await failedTask(apiKey, 'second');
      await checkBalance(t, accountId, apiKey, { available: 200, held: 0 });

      const retryA = await t.call('POST', '/api/v1/jobs/retry', {
        key: apiKey,
        body: { taskId: sourceA },
        headers: idem('retry-once'),
      });
      expectOk(retryA, 200);
      const replayA = await t.call('POST', '/api/v1/jobs/retry', {
        key: apiKey,
        body: { taskId: sourceA },
        headers: idem('retry-once'),
      });
      expectOk(replayA, 200);
      expect(replayA.body.data.taskId).toBe(retryA.body.data.taskId);
      expect(replayA.headers.get('idempotent-replayed')).toBe('true');

      const retryB = await t.call('POST', '/api/v1/jobs/retry', {
        key: apiKey,
        body: { taskId: sourceB },
        headers: idem('retry-once'),
      });
      expectOk(retryB, 200);
      expect(retryB.body.data.taskId).not.toBe(retryA.body.data.taskId);
      expect(retryB.body.data.retryOf).toBe(sourceB);

      // The retry scope does not collide with createTask's.
      const created = await createTask(t, apiKey, bodyD(), { headers: idem('retry-once') });
      expectOk(created, 202);
      expect([retryA.body.data.taskId, retryB.body.data.taskId]).not.toContain(created.body.data.taskId);

      // Two sources retried, one created: three holds on top of the two released ones, no more.
      const holds = await holdsOf(t, accountId);
      expect(holds).toHaveLength(5);
      for (const id of [retryA.body.data.taskId, retryB.body.data.taskId, created.body.data.taskId])
        await waitForTerminal(t, apiKey, id);
      await checkBalance(t, accountId, apiKey, { held: 0, spent: PRICE_D, available: 200 - PRICE_D });
    });
  });

  describe('the 24-hour window', () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    let manual: TestService;
    beforeAll(async () => {
      manual = await startTestService({}, { clock });
    });
    afterAll(async () => {
      await manual?.close();
    });

    it('replays within 24 hours and starts afresh after', async () => {
      const { accountId, apiKey } = await manual.account(100);
      const first = await createTask(manual, apiKey, bodyD(), { headers: idem('daily') });
      expectOk(first, 202);
      clock.advance(24 * 3600_000 - 1_000);
      const within = await createTask(manual, apiKey, bodyD(), { headers: idem('daily') });
      expect(within.body.data.taskId).toBe(first.body.data.taskId);
      expect(within.headers.get('idempotent-replayed')).toBe('true');
      clock.advance(2_000);
      const after = await createTask(manual, apiKey, bodyD(), { headers: idem('daily') });
      expectOk(after, 202);
      expect(after.body.data.taskId).not.toBe(first.body.data.taskId);
      expect(after.headers.get('idempotent-replayed')).toBeNull();
      expect(await holdsOf(manual, accountId)).toHaveLength(2);
      await checkBalance(manual, accountId, apiKey);
    });
  });
});
