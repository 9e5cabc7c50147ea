/**
 * Where createTask's slow answers at half peak come from (issue 30 step 4): the paced half-peak
 * load of bench/http.ts (the peak by autocannon first, 50 connections, simulator latency 10 min;
 * `--endpoint=recordInfo|quote` for an endpoint that writes nothing, beside it)
 * while the service (bench/pause-watch.ts as its preload) and this load process each record their
 * garbage-collection pauses and event-loop stalls. Prints, per run, p50/p99/max and each process's
 * pauses inside the paced window: a stall of the service's thread is paid by every request due
 * during it; slow answers with no such stall come from elsewhere (a wait that does not hold the
 * thread, the client, the scheduler).
 *   npx tsx bench/p99-pauses.ts [--runs=3] [--seconds=8] [--endpoint=createTask|recordInfo|quote]
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pacedLoad } from './paced-load.js';
import { type Pause, watchPauses } from './pause-watch.js';
import {
  type Endpoint,
  cannon,
  cannonOptions,
  createAccounts,
  createOneTask,
  endpointShapes,
  newServiceDir,
  round,
  settle,
  sqliteUrl,
  startService,
} from './support.js';

const CONNECTIONS = 50;

function option(name: string, fallback: number): number {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  return arg ? Number(arg.slice(name.length + 3)) : fallback;
}

function pausesIn(file: string, from: number, to: number): Pause[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Pause)
    .filter((p) => p.at >= from && p.at <= to);
}

function summary(pauses: Pause[]) {
  const of = (kind: Pause['kind']) => {
    const own = pauses.filter((p) => p.kind === kind).map((p) => p.ms);
    return {
      n: own.length,
      maxMs: round(Math.max(0, ...own), 1),
      sumMs: round(
        own.reduce((a, b) => a + b, 0),
        0,
      ),
    };
  };
  return { gc: of('gc'), stalls: of('stall') };
}

async function run(endpoint: Endpoint, seconds: number) {
  const dir = newServiceDir();
  const dbUrl = sqliteUrl(dir);
  const base = join(dir, 'pauses');
  const [account] = await createAccounts(dbUrl, 1);
  const service = await startService({
    dir,
    dbUrl,
    removeDir: true,
    env: { MEDIAFORGE_SIMULATOR_LATENCY_MS: String(10 * 60_000), MEDIAFORGE_PAUSES_FILE: base },
    nodeArgs: ['--import', 'tsx', '--import', './bench/pause-watch.ts'],
  });
  const ownFile = `${base}.load`;
  const stopWatching = watchPauses(ownFile);
  try {
    const shapes = endpointShapes(account.apiKey, await createOneTask(service.url, account.apiKey));
    const peak = await cannon(cannonOptions(service.url, shapes[endpoint], CONNECTIONS, 3));
    await settle(service.pid, 5000);
    const from = Date.now();
    const half = await pacedLoad(service.url, shapes[endpoint], {
      rate: Math.max(1, peak.rps / 2),
      seconds,
      connections: CONNECTIONS,
    });
    const to = Date.now();
    return {
      endpoint,
      peakRps: round(peak.rps, 0),
      p50Ms: round(half.p50Ms, 1),
      p99Ms: round(half.p99Ms, 1),
      maxMs: round(half.maxMs, 1),
      clientLagP99Ms: round(half.lagP99Ms, 1),
      service: summary(pausesIn(`${base}.${service.pid}`, from, to)),
      load: summary(pausesIn(ownFile, from, to)),
    };
  } finally {
    stopWatching();
    rmSync(ownFile, { force: true });
    await service.stop();
  }
}

const runs = option('runs', 3);
const seconds = option('seconds', 8);
const endpoint = (process.argv.find((a) => a.startsWith('--endpoint='))?.slice('--endpoint='.length) ??
  'createTask') as Endpoint;
if (!['createTask', 'recordInfo', 'quote'].includes(endpoint))
  throw new Error(`--endpoint=${endpoint}: createTask, recordInfo or quote`);
for (let i = 0; i < runs; i++) console.log(JSON.stringify(await run(endpoint, seconds)));
