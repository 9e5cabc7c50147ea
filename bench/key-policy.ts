/**
 * What a key policy costs createTask (issue 40): the createTask load of the ledger benchmark (real
 * holds and inserts, a fresh Idempotency-Key per request, nothing finishing) through a key with a
 * monthly budget and a model allow-list (the budget counted in the hold's own statement, the
 * allow-list matched, the budget's alerts looked for after the commit) against a key without a
 * policy, each on an account of its own, same service process. Runs A B B A after a warm-up of
 * each, as bench/ledger.ts, so that the shared machine weighs on both alike.
 */
import {
  cannon,
  cannonOptions,
  checkMostlyOk,
  createAccounts,
  isMain,
  MODEL,
  newServiceDir,
  pooledRate,
  prepareDatabase,
  round,
  settle,
  sqliteUrl,
  startService,
  TYPICAL_BODY,
  type BenchOutput,
  type LoadResult,
  type RunMode,
} from './support.js';
import { createKey } from '../runtime/accounts/accounts.js';
import { applyPolicyInput, NO_POLICY } from '../runtime/accounts/key-policy.js';

const CONNECTIONS = 50;

export async function benchKeyPolicy(mode: RunMode): Promise<BenchOutput> {
  const seconds = mode.quick ? 1.5 : 6;
  const warmup = mode.quick ? 1 : 2;
  const dir = newServiceDir();
  const dbUrl = sqliteUrl(dir);
  const [bare, policed] = await createAccounts(dbUrl, 2);
  // A budget the run never reaches and an allow-list whose pattern the model matches (not its first entry).
  const policy = applyPolicyInput(
    NO_POLICY,
    {
      budget: '1000000000000/month',
      models: ['vendor_x/*', `${MODEL.split('/')[0]}/*`],
    },
    Date.now(),
  );
  const policyKey = await prepareDatabase(dbUrl, (db) =>
    createKey(db, policed.accountId, 'personal', Date.now(), policy),
  );
  const service = await startService({
    dir,
    dbUrl,
    removeDir: true,
    env: { MEDIAFORGE_SIMULATOR_LATENCY_MS: String(10 * 60_000) },
  });
  try {
    const shape = {
      method: 'POST' as const,
      path: '/api/v1/jobs/createTask',
      body: TYPICAL_BODY,
      uniqueIdempotencyKey: true,
    };
    const load = (key: string, s: number) =>
      cannon(cannonOptions(service.url, { ...shape, headers: { authorization: `Bearer ${key}` } }, CONNECTIONS, s));
    await load(bare.apiKey, warmup);
    await load(policyKey.apiKey, warmup);
    const runs: { kind: 'with' | 'without'; r: LoadResult }[] = [];
    for (const kind of ['with', 'without', 'without', 'with'] as const) {
      await settle(service.pid, mode.quick ? 1500 : 15_000);
      const r = await load(kind === 'with' ? policyKey.apiKey : bare.apiKey, seconds);
      checkMostlyOk(`createTask (${kind} policy)`, r, true);
      runs.push({ kind, r });
    }
    const rate = (kind: 'with' | 'without') =>
      pooledRate(
        `createTask (${kind} policy)`,
        runs.filter((x) => x.kind === kind).map((x) => x.r),
      );
    const withPolicy = rate('with');
    const without = rate('without');
    return {
      figures: {
        createTaskWithPolicyPerSec: round(withPolicy, 0),
        createTaskWithoutPolicyPerSec: round(without, 0),
        createTaskWithPolicyVsWithout: round(withPolicy / without, 3),
      },
      notes: [
        `key-policy: SQLite, ${CONNECTIONS} connections, runs A B B A of ${seconds} s after ${warmup} s warm-ups; with = a key with a monthly budget and a two-entry allow-list, without = a key without a policy, each on its own account`,
      ],
    };
  } finally {
    await service.stop();
  }
}

if (isMain(import.meta.url)) {
  console.log(JSON.stringify(await benchKeyPolicy({ quick: process.argv.includes('--quick') })));
}
