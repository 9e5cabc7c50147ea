/**
 * HTTP against the machine's limit. autocannon (in this process) drives 50 keep-alive connections
 * at a bare node:http server answering a fixed 100-byte JSON body (the limit of this machine for
 * this client), at the ceiling server (bench/ceiling-server.ts: a minimal Fastify + better-sqlite3
 * process doing recordInfo's and quote's work on the service's database) and at the real service
 * on its embedded SQLite default: quote, recordInfo of an existing task, and createTask with real
 * holds and inserts (a fresh Idempotency-Key per request, simulator latency 10 minutes so nothing
 * finishes during the run). Every server is a separate process, so the load generator never shares
 * their event loop. Each endpoint: a warm-up (discarded), a run of the bare server, a run of the
 * ceiling (quote, recordInfo), the endpoint at full load (its ratios are to those adjacent runs),
 * then an open-loop load at half its rate (bench/paced-load.ts) for p50/p99 latency; createTask
 * also at autocannon's overallRate of half, the way its p99 was measured before issue 30.
 */
import { join } from 'node:path';
import {
  cannon,
  cannonOptions,
  cpuMs,
  checkMostlyOk,
  createAccounts,
  createOneTask,
  endpointShapes,
  durations,
  freePort,
  isMain,
  newServiceDir,
  round,
  settle,
  spawnHttpProcess,
  sqliteUrl,
  startService,
  type BenchOutput,
  type LoadResult,
  type RequestShape,
  type RunMode,
  type ServiceProcess,
} from './support.js';
import { rmSync } from 'node:fs';
import { startCeilingServer } from './ceiling.js';
import { pacedLoad } from './paced-load.js';

export const CONNECTIONS = 50;

/** The limit: node:http, no framework, a constant body of exactly 100 bytes. */
const BARE_SERVER = `
const http = require('node:http');
const head = '{"code":200,"msg":"success","data":{"ok":true,"pad":"';
const body = Buffer.from(head + 'x'.repeat(100 - head.length - 3) + '"}}');
if (body.length !== 100) throw new Error('body is ' + body.length + ' bytes');
http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  });
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

export async function startBareServer() {
  const port = await freePort();
  const dir = newServiceDir();
  let spawned: Awaited<ReturnType<typeof spawnHttpProcess>>;
  try {
    spawned = await spawnHttpProcess(['-e', BARE_SERVER], {
      env: { ...process.env, PORT: String(port) },
      port,
      logPath: join(dir, 'bare.log'),
      readyPath: '/',
      label: 'bare node:http server',
    });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    ...spawned,
    async stop() {
      await spawned.stop(2000);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface HttpOptions extends RunMode {
  /** Extra node flags for the service process (--cpu-prof ...). */
  serviceNodeArgs?: string[];
  /** Only these service endpoints (profiling one). */
  only?: ('quote' | 'recordInfo' | 'createTask')[];
}

export async function benchHttp(options: HttpOptions): Promise<BenchOutput> {
  const d = durations(options);
  const notes: string[] = [];
  const figures: Record<string, number | null> = {};
  const dir = newServiceDir();
  const dbUrl = sqliteUrl(dir);
  const [account] = await createAccounts(dbUrl, 1);
  // Both servers run for the whole benchmark; only one is under load at a time.
  const [bareStarted, serviceStarted] = await Promise.allSettled([
    startBareServer(),
    startService({
      dir,
      dbUrl,
      removeDir: true,
      env: { MEDIAFORGE_SIMULATOR_LATENCY_MS: String(10 * 60_000) },
      nodeArgs: options.serviceNodeArgs,
    }),
  ]);
  if (bareStarted.status === 'rejected' || serviceStarted.status === 'rejected') {
    if (bareStarted.status === 'fulfilled') await bareStarted.value.stop();
    if (serviceStarted.status === 'fulfilled') await serviceStarted.value.stop();
    throw bareStarted.status === 'rejected' ? bareStarted.reason : (serviceStarted as PromiseRejectedResult).reason;
  }
  const bare = bareStarted.value;
  const service: ServiceProcess = serviceStarted.value;
  let ceiling: Awaited<ReturnType<typeof startCeilingServer>> | undefined;
  try {
    ceiling = await startCeilingServer(service);
    const pids = [service.pid, bare.pid, ceiling.pid];
    const quiet = async () => {
      for (const pid of pids) await settle(pid, d.settleMs);
    };
    const bareShape: RequestShape = { method: 'GET', path: '/' };
    await cannon(cannonOptions(bare.url, bareShape, CONNECTIONS, d.warmupSeconds)); // warm-up
    const bareRuns: LoadResult[] = [];

    // The task recordInfo reads: created once, queued or running for the whole run.
    const shapes = endpointShapes(account.apiKey, await createOneTask(service.url, account.apiKey));
    const sizes: string[] = [];
    const lags: string[] = [];
    for (const name of options.only ?? (['quote', 'recordInfo', 'createTask'] as const)) {
      const ceilingUrl = name === 'createTask' ? undefined : ceiling.url;
      if (ceilingUrl)
        sizes.push(
          `${name} ${await answerBytes(service.url, shapes[name])} B from the service, ${await answerBytes(ceilingUrl, shapes[name])} B from the ceiling`,
        );
      // Warm-up, then the limit again right before the endpoint's own run: each ratio compares
      // adjacent runs, so a slow patch of the shared machine weighs on all of them.
      await quiet();
      await cannon(cannonOptions(service.url, shapes[name], CONNECTIONS, d.warmupSeconds));
      if (ceilingUrl) await cannon(cannonOptions(ceilingUrl, shapes[name], CONNECTIONS, d.warmupSeconds));
      await quiet();
      const limit = await cannon(cannonOptions(bare.url, bareShape, CONNECTIONS, d.peakSeconds));
      checkMostlyOk('bare', limit);
      bareRuns.push(limit);
      if (bareRuns.length === 1) {
        // The limit's own latency at half its rate, once.
        await quiet();
        // autocannon here: at half the bare rate the paced client (node:http) would measure itself.
        const bareHalf = await cannon(
          cannonOptions(bare.url, bareShape, CONNECTIONS, d.halfSeconds, Math.max(1, Math.round(limit.rps / 2))),
        );
        figures.bareP50Ms = round(bareHalf.p50Ms, 2);
        figures.bareP99Ms = round(bareHalf.p99Ms, 2);
      }
      let top: LoadResult | undefined;
      let topCpuMs = NaN;
      if (ceilingUrl) {
        await quiet();
        const cpu0 = cpuMs(ceiling.pid) ?? NaN;
        top = await cannon(cannonOptions(ceilingUrl, shapes[name], CONNECTIONS, d.peakSeconds));
        topCpuMs = (cpuMs(ceiling.pid) ?? NaN) - cpu0;
        checkMostlyOk(`${name} on the ceiling server`, top);
      }
      await quiet();
      const cpu0 = cpuMs(service.pid) ?? NaN;
      const peak = await cannon(cannonOptions(service.url, shapes[name], CONNECTIONS, d.peakSeconds));
      const peakCpuMs = (cpuMs(service.pid) ?? NaN) - cpu0;
      figures[`${name}CpuMsPerRequest`] = round(peakCpuMs / (peak.ok + peak.non2xx), 3);
      checkMostlyOk(name, peak);
      if (top) {
        const ceilingName = `ceiling${name[0].toUpperCase()}${name.slice(1)}`;
        figures[`${ceilingName}Rps`] = round(top.rps, 0);
        figures[`${ceilingName}VsBare`] = round(top.rps / limit.rps, 3);
        figures[`${name}VsCeiling`] = round(peak.rps / top.rps, 3);
        // CPU per answer moves far less with the other work on a shared machine than a rate.
        const topCpuPerRequest = topCpuMs / (top.ok + top.non2xx);
        figures[`${ceilingName}CpuMsPerRequest`] = round(topCpuPerRequest, 3);
        figures[`${name}VsCeilingByCpu`] = round(topCpuPerRequest / (figures[`${name}CpuMsPerRequest`] ?? NaN), 3);
      }
      await quiet();
      const half = await pacedLoad(service.url, shapes[name], halfOf(peak.rps, d.halfSeconds));
      checkMostlyOk(`${name} at half rate`, half);
      figures[`${name}Rps`] = round(peak.rps, 0);
      figures[`${name}VsBare`] = round(peak.rps / limit.rps, 3);
      figures[`${name}P50Ms`] = round(half.p50Ms, 2);
      figures[`${name}P99Ms`] = round(half.p99Ms, 2);
      figures[`${name}HalfRateMaxMs`] = round(half.maxMs, 1);
      lags.push(
        `${name} ${round(half.lagP99Ms, 1)} ms, last answer ${round(half.drainMs, 0)} ms after the last due time`,
      );
      if (name === 'createTask') {
        // The measure before issue 30, for comparison: autocannon at overallRate = half.
        await quiet();
        const bursts = await cannon(
          cannonOptions(service.url, shapes[name], CONNECTIONS, d.halfSeconds, Math.max(1, Math.round(peak.rps / 2))),
        );
        figures.createTaskAutocannonHalfP50Ms = round(bursts.p50Ms, 2);
        figures.createTaskAutocannonHalfP99Ms = round(bursts.p99Ms, 2);
      }
    }
    figures.bareRps = round(bareRuns.reduce((a, r) => a + r.rps, 0) / bareRuns.length, 0);
    notes.push(
      `http: ${CONNECTIONS} connections; a warm-up excluded before each; ${d.peakSeconds} s at full load (rate = 2xx answers/s); ` +
        `each XVsBare divides by a ${d.peakSeconds} s run of the bare server made right before it (bare runs: ${bareRuns.map((r) => r.rps.toFixed(0)).join(', ')} req/s; bareRps is their mean), ` +
        `each XVsCeiling by a run of the ceiling server (bench/ceiling-server.ts, Fastify + better-sqlite3 on the service's file) made between the two (XVsCeilingByCpu: the ceiling's CPU per answer ÷ the service's, each process's /proc time over its run); answers: ${sizes.join('; ')}; ` +
        `p50/p99 at half peak: ${d.halfSeconds} s of requests due evenly at half the peak rate over at most ${CONNECTIONS} connections, each latency from its due time (bench/paced-load.ts; p99 of this process's own lag in sending, and how far the answers fell behind: ${lags.join('; ')}); bareP50Ms/bareP99Ms at autocannon's overallRate; ` +
        `createTaskAutocannonHalfP99Ms is the former measure (autocannon overallRate: bursts each second, latency-weighted by its 1 ms expected-interval correction); ` +
        'service = node bin/mediaforge.js serve (request logging on, as shipped) on SQLite, in its own process; each run starts once every process is quiet',
    );
  } finally {
    await ceiling?.stop(2000);
    await service.stop();
    await bare.stop();
  }
  return { figures, notes };
}

/** The paced load at half a measured rate. */
function halfOf(rps: number, seconds: number) {
  return { rate: Math.max(1, rps / 2), seconds, connections: CONNECTIONS };
}

/** The size of one answer's body to `shape` (the ceiling's and the service's are compared in the notes). */
async function answerBytes(url: string, shape: RequestShape): Promise<number> {
  const response = await fetch(`${url}${shape.path}`, {
    method: shape.method,
    headers: { ...(shape.body ? { 'content-type': 'application/json' } : {}), ...shape.headers },
    body: shape.body,
  });
  const bytes = (await response.arrayBuffer()).byteLength;
  if (response.status !== 200) throw new Error(`${url}${shape.path}: ${response.status}`);
  return bytes;
}

if (isMain(import.meta.url)) {
  const quick = process.argv.includes('--quick');
  // --only=createTask[,quote,...]: one endpoint's rows (and the bare run before it), not all three.
  const only = process.argv
    .find((a) => a.startsWith('--only='))
    ?.slice('--only='.length)
    .split(',') as HttpOptions['only'];
  console.log(JSON.stringify(await benchHttp({ quick, only })));
}
