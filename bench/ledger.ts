/**
 * Ledger under contention: the createTask load of the HTTP benchmark (real holds and inserts, a
 * fresh Idempotency-Key per request, nothing finishing) with 50 connections all on ONE account,
 * against 50 connections on 50 different accounts (one per connection), same service process.
 * The two run alternately, A B B A (after a warm-up of each), so a slow patch of the shared machine
 * or the growing tables weigh on both alike; each rate is the sum of its two runs' 2xx over their time.
 * Each run starts once the service is quiet again (its worker done with the previous run's tasks).
 */
import {
  cannon,
  cannonOptions,
  checkMostlyOk,
  pooledRate,
  settle,
  createAccounts,
  isMain,
  newServiceDir,
  round,
  sqliteUrl,
  startService,
  TYPICAL_BODY,
  type BenchOutput,
  type LoadResult,
  type RunMode,
} from './support.js';

export const CONNECTIONS = 50;

export interface ContentionRates {
  same: number;
  many: number;
}

/** A B B A createTask runs on a running service: one shared key vs one key per connection. */
export async function sameVsMany(
  url: string,
  pid: number,
  sharedKey: string,
  ownKeys: string[],
  seconds: number,
  warmupSeconds: number,
  settleMs: number,
): Promise<ContentionRates> {
  const shape = {
    method: 'POST' as const,
    path: '/api/v1/jobs/createTask',
    body: TYPICAL_BODY,
    uniqueIdempotencyKey: true,
  };
  const same = async () => (
    await settle(pid, settleMs),
    cannon(cannonOptions(url, { ...shape, headers: { authorization: `Bearer ${sharedKey}` } }, CONNECTIONS, seconds))
  );
  const many = async () => (
    await settle(pid, settleMs),
    cannon(cannonOptions(url, { ...shape, keysPerConnection: ownKeys }, CONNECTIONS, seconds))
  );
  await cannon(
    cannonOptions(url, { ...shape, headers: { authorization: `Bearer ${sharedKey}` } }, CONNECTIONS, warmupSeconds),
  );
  await cannon(cannonOptions(url, { ...shape, keysPerConnection: ownKeys }, CONNECTIONS, warmupSeconds));
  const runs: { kind: 'same' | 'many'; r: LoadResult }[] = [];
  for (const kind of ['same', 'many', 'many', 'same'] as const) {
    const r = kind === 'same' ? await same() : await many();
    checkMostlyOk(`createTask (${kind} account${kind === 'many' ? 's' : ''})`, r, true);
    runs.push({ kind, r });
  }
  const rate = (kind: 'same' | 'many') =>
    pooledRate(
      `createTask (${kind})`,
      runs.filter((x) => x.kind === kind).map((x) => x.r),
    );
  return { same: rate('same'), many: rate('many') };
}

export async function benchLedger(mode: RunMode): Promise<BenchOutput> {
  const seconds = mode.quick ? 1.5 : 6;
  const warmup = mode.quick ? 1 : 2;
  const dir = newServiceDir();
  const dbUrl = sqliteUrl(dir);
  const accounts = await createAccounts(dbUrl, CONNECTIONS + 1);
  const service = await startService({
    dir,
    dbUrl,
    removeDir: true,
    env: { MEDIAFORGE_SIMULATOR_LATENCY_MS: String(10 * 60_000) },
  });
  try {
    const rates = await sameVsMany(
      service.url,
      service.pid,
      accounts[0].apiKey,
      accounts.slice(1).map((a) => a.apiKey),
      seconds,
      warmup,
      mode.quick ? 1500 : 15_000,
    );
    return {
      figures: {
        createTaskSameAccountPerSec: round(rates.same, 0),
        createTaskManyAccountsPerSec: round(rates.many, 0),
        sameAccountVsManyAccounts: round(rates.same / rates.many, 3),
      },
      notes: [
        `ledger: SQLite, ${CONNECTIONS} connections, runs A B B A of ${seconds} s after ${warmup} s warm-ups; same = all on one account, many = one account per connection`,
      ],
    };
  } finally {
    await service.stop();
  }
}

if (isMain(import.meta.url)) {
  console.log(JSON.stringify(await benchLedger({ quick: process.argv.includes('--quick') })));
}
