import { describe, expect, it } from 'vitest';
import { waitForTerminal, type TestService } from '../support/service.js';
import { serviceForSuite } from '../support/suite-service.js';
import { bodyD, checkBalance, createTask, expectOk, PRICE_D } from './helpers.js';

/** Watches the wallet while `work` runs and returns every (available, held) pair it saw. */
async function watchWallet<T>(
  t: TestService,
  accountId: string,
  work: Promise<T>,
): Promise<{ result: T; seen: { available: number; held: number }[] }> {
  const seen: { available: number; held: number }[] = [];
  let done = false;
  const watcher = (async () => {
    while (!done) {
      seen.push(await t.wallet(accountId));
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  try {
    const result = await work;
    return { result, seen };
  } finally {
    done = true;
    await watcher;
  }
}

describe('concurrency', () => {
  const svc = serviceForSuite();
  /** Every hold the account was ever given (a settled or released hold keeps its row). */
  const holdsOf = (accountId: string) =>
    svc.t.service.ctx.db.kysely.selectFrom('holds').selectAll().where('account_id', '=', accountId).execute();

  it('200 parallel createTask calls on a balance that covers 50 accept exactly 50', async () => {
    const { accountId, apiKey } = await svc.t.account(50 * PRICE_D);
    const calls = Array.from({ length: 200 }, (_, i) => createTask(svc.t, apiKey, bodyD(`parallel task number ${i}`)));
    const { result: responses, seen } = await watchWallet(svc.t, accountId, Promise.all(calls));

    const accepted = responses.filter((r) => r.status === 202);
    const refused = responses.filter((r) => r.status !== 202);
    expect(accepted).toHaveLength(50);
    expect(refused).toHaveLength(150);
    for (const r of refused) expect([r.status, r.body.code]).toEqual([402, 40201]);
    for (const r of accepted) expect(r.body.data).toMatchObject({ state: 'queued', credits: PRICE_D });
    expect(new Set(accepted.map((r) => r.body.data.taskId)).size).toBe(50);

    for (const w of seen) {
      expect(w.available).toBeGreaterThanOrEqual(0);
      expect(w.held).toBeGreaterThanOrEqual(0);
      expect(w.available + w.held).toBeLessThanOrEqual(50 * PRICE_D);
    }
    await checkBalance(svc.t, accountId, apiKey);

    const finals = await Promise.all(accepted.map((r) => waitForTerminal(svc.t, apiKey, r.body.data.taskId, 60_000)));
    for (const f of finals) expect(f).toMatchObject({ state: 'succeeded', credits: PRICE_D, settled: true });
    await checkBalance(svc.t, accountId, apiKey, {
      available: 0,
      held: 0,
      spent: 50 * PRICE_D,
      total: 0,
      purchased: 50 * PRICE_D,
    });
    const holds = await holdsOf(accountId);
    expect(holds).toHaveLength(50);
  }, 120_000);

  it('50 parallel calls with one Idempotency-Key make one task and one hold', async () => {
    const { accountId, apiKey } = await svc.t.account(1_000);
    const headers = { 'idempotency-key': 'one-key-for-all' };
    const calls = Array.from({ length: 50 }, () =>
      createTask(svc.t, apiKey, bodyD('the same request fifty times'), { headers }),
    );
    const { result: responses, seen } = await watchWallet(svc.t, accountId, Promise.all(calls));

    for (const r of responses) expectOk(r, 202);
    const ids = new Set(responses.map((r) => r.body.data.taskId));
    expect(ids.size).toBe(1);
    expect(responses.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(49);
    for (const w of seen) expect(w.held).toBeLessThanOrEqual(PRICE_D);

    const holds = await holdsOf(accountId);
    expect(holds).toHaveLength(1);
    expect((await svc.t.call('GET', '/api/v1/jobs', { key: apiKey })).body.data.items).toHaveLength(1);
    await checkBalance(svc.t, accountId, apiKey);

    const [taskId] = [...ids];
    expect((await waitForTerminal(svc.t, apiKey, taskId)).state).toBe('succeeded');
    await checkBalance(svc.t, accountId, apiKey, { available: 1_000 - PRICE_D, held: 0, spent: PRICE_D });
  }, 120_000);
});
