import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createKey } from '../../runtime/accounts/accounts.js';
import { NO_POLICY } from '../../runtime/accounts/key-policy.js';
import { ManualClock } from '../../runtime/clock.js';
import { expireTask, failTask, succeedTask } from '../../runtime/tasks/resolve-task.js';
import { openDb } from '../../runtime/storage/dialect.js';
import { migrateToLatest } from '../../runtime/storage/migrate.js';
import { bodyD, createTask, IMAGE, MODEL_MINI, PRICE_D } from '../http/helpers.js';
import { checkLedger, startTestService, testDbUrl, TEST_DB, type TestService } from '../support/service.js';
import { GatedDeployment, recordCounts, spawnServer, type ServerProcess } from './support.js';

const counts: Record<string, number> = {
  resolutionRounds: 0,
  resolutionAttempts: 0,
  holdRounds: 0,
  holdRequests: 0,
  replayRequests: 0,
  violations: 0,
};

describe('races', () => {
  let t: TestService;
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  beforeAll(async () => {
    t = await startTestService(
      {},
      { clock, startWorker: false, deployments: [new GatedDeployment(() => clock.now())] },
    );
  });
  afterAll(async () => {
    recordCounts('races', counts);
    await t?.close();
  });

  it('settle vs expire vs fail vs late success on one task: exactly one wins, the hold resolves once', async () => {
    const ROUNDS = 60;
    const { accountId, apiKey } = await t.account(PRICE_D * ROUNDS);
    const ctx = t.service.ctx;
    for (let round = 0; round < ROUNDS; round++) {
      counts.resolutionRounds++;
      const r = await createTask(t, apiKey, bodyD());
      const taskId = r.body.data.taskId;
      // Half the rounds start the task first (running), half leave it queued.
      if (round % 2) await t.service.worker!.runOnce();
      const success = { outputs: [], outputSeconds: 5 };
      const attempts = [
        () => succeedTask(ctx, taskId, success),
        () => expireTask(ctx, taskId),
        () => failTask(ctx, taskId, 'generation_failed', 'boom'),
        () => succeedTask(ctx, taskId, success),
        () => expireTask(ctx, taskId),
      ];
      // A different order each round.
      const order = attempts.map((_, i) => attempts[(i + round) % attempts.length]);
      counts.resolutionAttempts += order.length;
      const results = await Promise.allSettled(order.map((attempt) => attempt()));
      const wins = results.filter((x) => x.status === 'fulfilled' && x.value === true).length;
      const rejected = results.filter((x) => x.status === 'rejected');
      expect(rejected).toEqual([]);
      expect(wins).toBe(1);
      const hold = await ctx.db.kysely
        .selectFrom('holds')
        .selectAll()
        .where('task_id', '=', taskId)
        .executeTakeFirstOrThrow();
      const task = await ctx.db.kysely
        .selectFrom('tasks')
        .selectAll()
        .where('id', '=', taskId)
        .executeTakeFirstOrThrow();
      expect(hold.state).toBe(task.state === 'succeeded' ? 'settled' : 'released');
      const entries = await ctx.db.kysely
        .selectFrom('ledger_entries')
        .selectAll()
        .where('task_id', '=', taskId)
        .execute();
      expect(entries.filter((e) => e.kind === 'settle' || e.kind === 'release')).toHaveLength(1);
      // A late answer changes nothing.
      expect(await succeedTask(ctx, taskId, success)).toBe(false);
      expect(await expireTask(ctx, taskId)).toBe(false);
      await checkLedger(t.service, accountId);
    }
  });

  it('K concurrent holds over the balance: the accepted ones fit, the rest are 402 with nothing held', async () => {
    const mini = {
      model: MODEL_MINI,
      input: { prompt: 'a city at night, @Image1 as the skyline', reference_image_urls: [IMAGE], duration_seconds: -1 },
    };
    for (let round = 0; round < 8; round++) {
      counts.holdRounds++;
      const credits = 100 + round * 73;
      const { accountId, apiKey } = await t.account(credits);
      const K = 30;
      const bodies = Array.from({ length: K }, (_, i) =>
        (i * 7 + round) % 3 === 0 ? { body: mini, hold: 120 } : { body: bodyD(), hold: PRICE_D },
      );
      counts.holdRequests += K;
      const results = await Promise.all(bodies.map(({ body }) => createTask(t, apiKey, body)));
      let accepted = 0;
      for (const [i, r] of results.entries()) {
        if (r.status === 202) accepted += bodies[i].hold;
        else expect({ status: r.status, code: r.body.code }).toEqual({ status: 402, code: 40201 });
      }
      const w = await t.wallet(accountId);
      expect(w).toMatchObject({ held: accepted, available: credits - accepted, spent: 0 });
      // Nothing refused would have fit at the end: every refused request asked for more than what is left.
      for (const [i, r] of results.entries()) if (r.status === 402) expect(bodies[i].hold).toBeGreaterThan(w.available);
      await checkLedger(t.service, accountId);
    }
  });

  it('fifty concurrent createTask on a key whose budget covers ten: exactly ten held, forty 402 40203', async () => {
    const { accountId } = await t.account(PRICE_D * 100);
    const { keyId, apiKey } = await createKey(t.service.ctx.db, accountId, 'personal', clock.now(), {
      ...NO_POLICY,
      budget: { credits: PRICE_D * 10, period: 'day' },
    });
    counts.holdRequests += 50;
    const results = await Promise.all(Array.from({ length: 50 }, () => createTask(t, apiKey, bodyD())));
    const statuses = results.map((r) => (r.status === 202 ? 202 : `${r.status} ${r.body.code}`));
    expect(statuses.filter((s) => s === 202)).toHaveLength(10);
    expect(statuses.filter((s) => s !== 202)).toEqual(Array(40).fill('402 40203'));
    expect(await t.wallet(accountId)).toMatchObject({ held: PRICE_D * 10, available: PRICE_D * 90 });
    const spend = await t.service.ctx.db.kysely
      .selectFrom('key_spend')
      .selectAll()
      .where('api_key_id', '=', keyId)
      .execute();
    expect(spend.map((row) => [Number(row.held), Number(row.spent)])).toEqual([[PRICE_D * 10, 0]]);
    await checkLedger(t.service, accountId);
  });
  it('thirty concurrent createTask on a key capped at five in flight: exactly five accepted, the rest 429 42902', async () => {
    const { accountId } = await t.account(PRICE_D * 100);
    const { apiKey } = await createKey(t.service.ctx.db, accountId, 'personal', clock.now(), {
      ...NO_POLICY,
      maxTasksInFlight: 5,
    });
    counts.holdRequests += 30;
    const results = await Promise.all(Array.from({ length: 30 }, () => createTask(t, apiKey, bodyD())));
    const statuses = results.map((r) => (r.status === 202 ? 202 : `${r.status} ${r.body.code}`));
    expect(statuses.filter((s) => s === 202)).toHaveLength(5);
    expect(statuses.filter((s) => s !== 202)).toEqual(Array(25).fill('429 42902'));
    expect(await t.wallet(accountId)).toMatchObject({ held: PRICE_D * 5 });
    await checkLedger(t.service, accountId);
  });
});

describe.skipIf(TEST_DB !== 'sqlite')(
  '50 concurrent replays of one Idempotency-Key through two server processes on one SQLite file',
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'mediaforge-race-'));
    let servers: ServerProcess[] = [];
    let account: { accountId: string; apiKey: string };
    let dbUrl: string;
    beforeAll(async () => {
      dbUrl = await testDbUrl(dir);
      const db = await openDb(dbUrl);
      await migrateToLatest(db);
      account = await createAccount(db, { credits: 10 * PRICE_D, now: Date.now() });
      await db.close();
      const env = {
        MEDIAFORGE_DB: dbUrl,
        MEDIAFORGE_DATA_DIR: dir,
        MEDIAFORGE_SECRET: 'race-secret',
        MEDIAFORGE_SIMULATOR_LATENCY_MS: '600000',
        MEDIAFORGE_RATE_LIMIT_PER_MINUTE: '100000',
        MEDIAFORGE_ROLE: 'api',
      };
      servers = await Promise.all([spawnServer(env), spawnServer(env)]);
    }, 60_000);
    afterAll(async () => {
      recordCounts('races-replays', {
        replayRequests: counts.replayRequests,
        processes: 2,
        violations: counts.violations,
      });
      for (const s of servers) s.child.kill('SIGKILL');
      await Promise.all(servers.map((s) => s.exited));
      rmSync(dir, { recursive: true, force: true });
    });

    it('makes one task and one hold; every answer is that task', async () => {
      for (let round = 0; round < 3; round++) {
        const key = `race-${round}`;
        const requests = Array.from({ length: 50 }, (_, i) =>
          fetch(`${servers[i % 2].url}/api/v1/jobs/createTask`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${account.apiKey}`,
              'content-type': 'application/json',
              'idempotency-key': key,
            },
            body: JSON.stringify(bodyD()),
          }).then(async (r) => ({ status: r.status, body: (await r.json()) as any })),
        );
        counts.replayRequests += requests.length;
        const results = await Promise.all(requests);
        const bad = results.filter((r) => r.status !== 202);
        if (bad.length) {
          counts.violations++;
          console.log(
            servers
              .map((s) =>
                s
                  .output()
                  .split('\n')
                  .filter((l) => /"level":50/.test(l))
                  .slice(0, 2)
                  .join('\n'),
              )
              .join('\n'),
          );
        }
        expect(bad.map((r) => `${r.status} ${JSON.stringify(r.body).slice(0, 200)}`)).toEqual([]);
        expect(new Set(results.map((r) => r.body.data.taskId)).size).toBe(1);
      }
      const db = await openDb(dbUrl);
      try {
        const holds = await db.kysely
          .selectFrom('holds')
          .selectAll()
          .where('account_id', '=', account.accountId)
          .execute();
        expect(holds).toHaveLength(3);
        const w = await db.kysely
          .selectFrom('wallets')
          .selectAll()
          .where('account_id', '=', account.accountId)
          .executeTakeFirstOrThrow();
        expect(w).toMatchObject({ held: 3 * PRICE_D, available: 7 * PRICE_D });
        await checkLedger({ ctx: { db } } as any, account.accountId);
      } finally {
        await db.close();
      }
    }, 60_000);
  },
);
