import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, TEST_DB, type TestService } from '../support/service.js';
import { bodyD, checkBalance, createTask, expectError, expectOk, PRICE_D } from './helpers.js';

/**
 * Requests sent at one moment are accepted together (on SQLite, in one commit: one transaction with
 * a savepoint per request). Whatever is refused among them leaves nothing of its own and takes
 * nothing from the others: each accepted request has its task, hold and key; each refused one
 * none of them.
 */
describe('createTask requests sent together', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ simulatorLatencyMs: 600_000 });
    // A first request warms the path up, so the requests of a test arrive close enough to share a commit.
    const { apiKey } = await t.account(PRICE_D);
    expectOk(await createTask(t, apiKey, bodyD()), 202);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('replays one task to every request of one key sent together, and refuses the one with another body', async () => {
    const { accountId, apiKey } = await t.account(PRICE_D * 10);
    const headers = { 'idempotency-key': 'one-key-together' };
    const answers = await Promise.all([
      ...Array.from({ length: 5 }, () => createTask(t, apiKey, bodyD(), { headers })),
      createTask(t, apiKey, bodyD('another prompt'), { headers }),
    ]);
    const same = answers.slice(0, 5);
    for (const r of same) expectOk(r, 202);
    expect(new Set(same.map((r) => r.body.data.taskId)).size).toBe(1);
    expect(same.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(4);
    expectError(answers[5], 409, 40902);
    await checkBalance(t, accountId, apiKey, { held: PRICE_D, available: PRICE_D * 9 });
  });

  it('holds for as many as the balance covers, refuses the rest with 402, and keeps no key of a refused one', async () => {
    const { accountId, apiKey } = await t.account(PRICE_D * 3);
    const keys = Array.from({ length: 8 }, (_, i) => `together-${i}`);
    const answers = await Promise.all(
      keys.map((key) => createTask(t, apiKey, bodyD(), { headers: { 'idempotency-key': key } })),
    );
    const accepted = answers.filter((r) => r.status === 202);
    const refused = answers.filter((r) => r.status !== 202);
    expect(accepted).toHaveLength(3);
    for (const r of accepted) expectOk(r, 202);
    for (const r of refused) expectError(r, 402, 40201);
    expect(new Set(accepted.map((r) => r.body.data.taskId)).size).toBe(3);
    await checkBalance(t, accountId, apiKey, { available: 0, held: PRICE_D * 3 });
    const listed = (await t.call('GET', '/api/v1/jobs', { key: apiKey })).body.data.items as { taskId: string }[];
    expect(listed.map((task) => task.taskId).sort()).toEqual(accepted.map((r) => r.body.data.taskId).sort());

    // A refused request's key was rolled back with it: with credits, it is a new task, not a replay.
    const refusedKey = keys[answers.findIndex((r) => r.status === 402)];
    await t.service.ctx.db.kysely
      .transaction()
      .execute((trx) => t.service.ctx.ledger.purchase(trx, accountId, PRICE_D, Date.now()));
    const again = await createTask(t, apiKey, bodyD(), { headers: { 'idempotency-key': refusedKey } });
    expectOk(again, 202);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    await checkBalance(t, accountId, apiKey, { available: 0, held: PRICE_D * 4 });
  });

  it('holds once for each accepted task of many requests at once, keys sent twice among them', async () => {
    const { accountId, apiKey } = await t.account(PRICE_D * 30);
    // 45 requests, 40 keys: the first five keys are sent twice.
    const keys = Array.from({ length: 45 }, (_, i) => `many-${i < 40 ? i : i - 40}`);
    const answers = await Promise.all(
      keys.map((key) => createTask(t, apiKey, bodyD(), { headers: { 'idempotency-key': key } })),
    );
    for (const r of answers) if (r.status !== 202) expectError(r, 402, 40201);
    // The two answers of a key are the same: one task (one of them a replay), or both refused.
    for (let i = 0; i < 5; i++) {
      const [a, b] = [answers[i], answers[i + 40]];
      expect(b.status).toBe(a.status);
      if (a.status === 202) {
        expect(b.body.data.taskId).toBe(a.body.data.taskId);
        expect([a, b].filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(1);
      }
    }
    const tasks = new Set(answers.filter((r) => r.status === 202).map((r) => r.body.data.taskId as string));
    expect(tasks.size).toBe(30);
    await checkBalance(t, accountId, apiKey, { available: 0, held: PRICE_D * 30 });
    const holds = await t.service.ctx.db.kysely
      .selectFrom('holds')
      .select('task_id')
      .where('account_id', '=', accountId)
      .execute();
    expect(holds.map((h) => h.task_id).sort()).toEqual([...tasks].sort());
  });

  it.skipIf(TEST_DB !== 'postgres')(
    "a request whose database connection is lost is answered with an error; the service runs on, the account's balance untouched",
    async () => {
      const { accountId, apiKey } = await t.account(PRICE_D * 2);
      // The request waits on the account's wallet, held from another connection, so its backend can be terminated mid-transaction.
      const { default: pg } = await import('pg');
      const holder = new pg.Client({ connectionString: t.config.dbUrl });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT 1 FROM wallets WHERE account_id = $1 FOR UPDATE', [accountId]);
        const answer = createTask(t, apiKey, bodyD());
        const { rows: own } = await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        let waiting: number | undefined;
        for (let tries = 0; waiting === undefined && tries < 500; tries++) {
          const { rows } = await holder.query<{ pid: number }>(
            'SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))',
            [own[0].pid],
          );
          if (rows.length) waiting = rows[0].pid;
          else await new Promise((resolve) => setTimeout(resolve, 10));
        }
        expect(waiting, 'the request came to wait on the wallet').toBeDefined();
        await holder.query('SELECT pg_terminate_backend($1)', [waiting]);
        await holder.query('COMMIT');
        expectError(await answer, 500, 50001);
      } finally {
        await holder.end();
      }
      await checkBalance(t, accountId, apiKey, { available: PRICE_D * 2, held: 0 });
      expectOk(await createTask(t, apiKey, bodyD()), 202);
      await checkBalance(t, accountId, apiKey, { available: PRICE_D, held: PRICE_D });
    },
  );
});
