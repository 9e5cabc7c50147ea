/**
 * Diagnosis only: createTask (or another endpoint) on two checkouts side by side, each service in
 * its own process on its own database (SQLite, or a fresh PostgreSQL schema each with --pg), in
 * alternating runs A B B A A B after a warm-up of each. A = --base (a worktree at main), B = this tree.
 *   tsx bench/ab-trees.ts --base=/work/wt-base [--pg] [--seconds=5] [--endpoint=createTask|quote|recordInfo] [--accounts=1]
 * --accounts=N spreads the requests over N accounts in turn (each request the next account's key):
 * createTask with one account measures the wallet's lock, with 100 the rest (issue 42's two figures).
 */
import { join } from 'node:path';
import {
  cannon,
  cannonOptions,
  cpuMs,
  createAccounts,
  createOneTask,
  endpointShapes,
  type Endpoint,
  dropSchema,
  freePort,
  freshSchema,
  isMain,
  newServiceDir,
  pooledRate,
  reachablePostgres,
  ROOT,
  SERVICE_SECRET,
  settle,
  spawnHttpProcess,
  sqliteUrl,
  type LoadResult,
} from './support.js';
import { rmSync } from 'node:fs';

const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const base = option('base');
if (!base) throw new Error('usage: tsx bench/ab-trees.ts --base=DIR [--pg] [--seconds=5] [--accounts=1]');
const seconds = Number(option('seconds') ?? 5);
const accountCount = Number(option('accounts') ?? 1);
if (!Number.isSafeInteger(accountCount) || accountCount < 1)
  throw new Error(`--accounts=${option('accounts')}: a count`);
const endpointOption = option('endpoint') ?? 'createTask';
if (!['quote', 'recordInfo', 'createTask'].includes(endpointOption))
  throw new Error(`--endpoint=${endpointOption}: one of quote, recordInfo, createTask`);
const endpoint = endpointOption as Endpoint;
const pg = process.argv.includes('--pg') ? await reachablePostgres() : undefined;
const schemas: string[] = [];

async function start(root: string) {
  const dir = newServiceDir();
  let dbUrl = sqliteUrl(dir);
  if (pg) {
    const s = await freshSchema(pg);
    schemas.push(s.schema);
    dbUrl = s.url;
  }
  const port = await freePort();
  const spawned = await spawnHttpProcess(
    [join(root, 'bin/mediaforge.js'), 'serve', '--migrate', '--host', '127.0.0.1', '--port', String(port)],
    {
      env: {
        ...process.env,
        MEDIAFORGE_DB: dbUrl,
        MEDIAFORGE_DATA_DIR: dir,
        MEDIAFORGE_SECRET: SERVICE_SECRET,
        MEDIAFORGE_RATE_LIMIT_PER_MINUTE: '1000000000',
        MEDIAFORGE_ROLE: 'all',
        MEDIAFORGE_SIMULATOR_LATENCY_MS: String(10 * 60_000),
        ...(option('env') ? Object.fromEntries([option('env')!.split(':')]) : {}),
      },
      port,
      logPath: join(dir, `service-${port}.log`),
      readyPath: '/healthz',
      label: root,
    },
  );
  const accounts = await createAccounts(dbUrl, accountCount);
  const [account] = accounts;
  const shape = endpointShapes(account.apiKey, await createOneTask(spawned.url, account.apiKey))[endpoint];
  // recordInfo reads the first account's task: its key stays the one.
  if (accountCount > 1 && endpoint !== 'recordInfo') shape.keysPerRequest = accounts.map((a) => a.apiKey);
  return { spawned, shape, dir };
}

const a = await start(base);
const b = await start(ROOT);
try {
  // CPU of the service process per answered request, from the run's start until it is quiet again
  // (its worker done with what the run queued): less bent by the other work on a shared machine than a rate.
  const cpu = { A: { ms: 0, ok: 0 }, B: { ms: 0, ok: 0 } };
  const run = async (x: typeof a, secs: number, kind?: 'A' | 'B') => {
    await settle(a.spawned.pid, 15_000);
    await settle(b.spawned.pid, 15_000);
    const before = cpuMs(x.spawned.pid) ?? 0;
    const r = await cannon(cannonOptions(x.spawned.url, x.shape, 50, secs));
    await settle(x.spawned.pid, 15_000);
    if (kind) {
      cpu[kind].ms += (cpuMs(x.spawned.pid) ?? 0) - before;
      cpu[kind].ok += r.ok;
    }
    return r;
  };
  await run(a, 2);
  await run(b, 2);
  const runs: { kind: 'A' | 'B'; r: LoadResult }[] = [];
  for (const kind of ['A', 'B', 'B', 'A', 'A', 'B'] as const)
    runs.push({ kind, r: await run(kind === 'A' ? a : b, seconds, kind) });
  const rate = (k: 'A' | 'B') =>
    pooledRate(
      k,
      runs.filter((x) => x.kind === k).map((x) => x.r),
    );
  const perRequest = (k: 'A' | 'B') => cpu[k].ms / cpu[k].ok;
  console.log(
    `${endpoint} on ${pg ? 'PostgreSQL' : 'SQLite'}, ${accountCount} account${accountCount === 1 ? '' : 's'}: A (${base}) ${rate('A').toFixed(0)}/s, B (${ROOT}) ${rate('B').toFixed(0)}/s: B/A ${(rate('B') / rate('A')).toFixed(2)} (runs ${runs.map((x) => `${x.kind} ${x.r.rps.toFixed(0)}`).join(', ')}); ` +
      `service CPU per request (until quiet): A ${perRequest('A').toFixed(2)} ms, B ${perRequest('B').toFixed(2)} ms: A/B ${(perRequest('A') / perRequest('B')).toFixed(2)}`,
  );
} finally {
  await a.spawned.stop(2000);
  await b.spawned.stop(2000);
  rmSync(a.dir, { recursive: true, force: true });
  rmSync(b.dir, { recursive: true, force: true });
  if (pg) for (const s of schemas) await dropSchema(pg, s);
}
if (isMain(import.meta.url)) process.exit(0);
