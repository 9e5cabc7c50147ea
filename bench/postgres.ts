/**
 * PostgreSQL, where reachable (MEDIAFORGE_TEST_PG, else postgres://postgres@127.0.0.1:5432/test):
 * the createTask load of the HTTP benchmark against a service on a fresh schema of that server and
 * against a service on SQLite, both running side by side, measured alternately (S P P S after a
 * warm-up of each). pgCreateTaskVsSqlite = PostgreSQL rate / SQLite rate, all requests on one account
 * (on PostgreSQL each waits for the wallet row's lock); pgCreateTaskVsSqliteManyAccounts the same with
 * the requests spread over 100 accounts in turn (issue 42: ≥ 0.35 with one, ≥ 0.6 with 100). The full run also
 * repeats the ledger contention comparison on PostgreSQL, where a hot wallet row really is a lock.
 * The schema is dropped afterwards.
 */
import {
  cannon,
  cannonOptions,
  checkMostlyOk,
  pooledRate,
  settle,
  createAccounts,
  dropSchema,
  freshSchema,
  isMain,
  newServiceDir,
  reachablePostgres,
  round,
  sqliteUrl,
  startService,
  TYPICAL_BODY,
  type BenchOutput,
  type LoadResult,
  type RunMode,
  type ServiceProcess,
} from './support.js';
import { sameVsMany } from './ledger.js';

const CONNECTIONS = 50;
/** The accounts pgCreateTaskVsSqliteManyAccounts spreads its requests over, each request the next one's key. */
const MANY_ACCOUNTS = 100;

export async function benchPostgres(mode: RunMode): Promise<BenchOutput> {
  const server = await reachablePostgres();
  if (!server) {
    return {
      figures: {
        pgCreateTaskVsSqlite: null,
        pgCreateTaskPerSec: null,
        sqliteCreateTaskPerSec: null,
        pgCreateTaskVsSqliteManyAccounts: null,
      },
      notes: [
        `postgres: no server answered at ${process.env.MEDIAFORGE_TEST_PG ? 'MEDIAFORGE_TEST_PG' : 'postgres://postgres@127.0.0.1:5432/test'}; pgCreateTaskVsSqlite is null`,
      ],
    };
  }
  const seconds = mode.quick ? 1.5 : 6;
  const warmup = mode.quick ? 1 : 2;
  const settleMs = mode.quick ? 1500 : 15_000;
  const env = { MEDIAFORGE_SIMULATOR_LATENCY_MS: String(10 * 60_000) };
  const { schema, url: pgUrl } = await freshSchema(server);
  const started: ServiceProcess[] = [];
  try {
    const sqliteDir = newServiceDir();
    const sqliteDb = sqliteUrl(sqliteDir);
    // The first account takes the one-account runs; the next MANY_ACCOUNTS the many-account runs (and
    // the first CONNECTIONS of them the ledger contention's one account per connection).
    const [pgAccounts, sqliteAccounts] = await Promise.all([
      createAccounts(pgUrl, MANY_ACCOUNTS + 1),
      createAccounts(sqliteDb, MANY_ACCOUNTS + 1),
    ]);
    const [sqliteAccount] = sqliteAccounts;
    const [pgStarted, sqliteStarted] = await Promise.allSettled([
      startService({ dbUrl: pgUrl, env, label: 'service on PostgreSQL' }),
      startService({ dir: sqliteDir, dbUrl: sqliteDb, removeDir: true, env, label: 'service on SQLite' }),
    ]);
    for (const s of [pgStarted, sqliteStarted]) if (s.status === 'fulfilled') started.push(s.value);
    if (pgStarted.status === 'rejected') throw pgStarted.reason;
    if (sqliteStarted.status === 'rejected') throw sqliteStarted.reason;
    const pgService = pgStarted.value;
    const sqliteService = sqliteStarted.value;

    const shape = {
      method: 'POST' as const,
      path: '/api/v1/jobs/createTask',
      body: TYPICAL_BODY,
      uniqueIdempotencyKey: true,
    };
    // Each run starts once both processes are quiet (the other's worker done with its last run's tasks).
    const run = async (s: ServiceProcess, keys: string[], secs: number) => {
      await settle(pgService.pid, settleMs);
      await settle(sqliteService.pid, settleMs);
      const auth = keys.length === 1 ? { headers: { authorization: `Bearer ${keys[0]}` } } : { keysPerRequest: keys };
      return cannon(cannonOptions(s.url, { ...shape, ...auth }, CONNECTIONS, secs));
    };
    /** S P P S after a warm-up of each, on `keys` of each engine's accounts: each engine's pooled rate. */
    const compare = async (label: string, pgKeys: string[], sqliteKeys: string[]) => {
      await run(sqliteService, sqliteKeys, warmup);
      await run(pgService, pgKeys, warmup);
      const runs: { engine: 'sqlite' | 'pg'; r: LoadResult }[] = [];
      for (const engine of ['sqlite', 'pg', 'pg', 'sqlite'] as const) {
        const r =
          engine === 'pg' ? await run(pgService, pgKeys, seconds) : await run(sqliteService, sqliteKeys, seconds);
        checkMostlyOk(`createTask on ${engine} (${label})`, r, true);
        runs.push({ engine, r });
      }
      const rate = (engine: 'sqlite' | 'pg') =>
        pooledRate(
          `createTask on ${engine} (${label})`,
          runs.filter((x) => x.engine === engine).map((x) => x.r),
        );
      return { pg: rate('pg'), sqlite: rate('sqlite') };
    };
    const keysOf = (accounts: { apiKey: string }[]) => accounts.map((a) => a.apiKey);
    const one = await compare('one account', [pgAccounts[0].apiKey], [sqliteAccount.apiKey]);
    const many = await compare(
      `${MANY_ACCOUNTS} accounts`,
      keysOf(pgAccounts.slice(1)),
      keysOf(sqliteAccounts.slice(1)),
    );
    const figures: Record<string, number | null> = {
      pgCreateTaskVsSqlite: round(one.pg / one.sqlite, 3),
      pgCreateTaskPerSec: round(one.pg, 0),
      sqliteCreateTaskPerSec: round(one.sqlite, 0),
      pgCreateTaskVsSqliteManyAccounts: round(many.pg / many.sqlite, 3),
      pgCreateTask100AccountsPerSec: round(many.pg, 0),
      sqliteCreateTask100AccountsPerSec: round(many.sqlite, 0),
    };
    const notes = [
      `postgres: ${server.replace(/\/\/[^@]*@/, '//…@')} schema ${schema} (dropped after); ${CONNECTIONS} connections, S P P S runs of ${seconds} s after warm-ups, on one account and then on ${MANY_ACCOUNTS} accounts in turn; pool of 10 connections (the service's default)`,
    ];
    if (!mode.quick) {
      await sqliteService.stop();
      started.splice(started.indexOf(sqliteService), 1);
      const contention = await sameVsMany(
        pgService.url,
        pgService.pid,
        pgAccounts[0].apiKey,
        keysOf(pgAccounts.slice(1, CONNECTIONS + 1)),
        seconds,
        warmup,
        settleMs,
      );
      figures.pgCreateTaskSameAccountPerSec = round(contention.same, 0);
      figures.pgCreateTaskManyAccountsPerSec = round(contention.many, 0);
      figures.pgSameAccountVsManyAccounts = round(contention.same / contention.many, 3);
      notes.push('postgres: ledger contention repeated on PostgreSQL (A B B A, one account vs one per connection)');
    }
    return { figures, notes };
  } finally {
    for (const s of started.reverse()) await s.stop().catch(() => {});
    await dropSchema(server, schema);
  }
}

if (isMain(import.meta.url)) {
  console.log(JSON.stringify(await benchPostgres({ quick: process.argv.includes('--quick') })));
}
