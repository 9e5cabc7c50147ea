/**
 * Shared pieces of the benchmarks: service processes spawned the way an operator starts them
 * (`node bin/mediaforge.js serve --migrate`), accounts written straight into their database before
 * the load, an autocannon wrapper, and the PostgreSQL probe. Every process spawned here is
 * registered and killed when the bench exits, whatever happens.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon, { type Options as CannonOptions, type Result as CannonResult } from 'autocannon';
import pg from 'pg';
import { createAccount, type CreatedAccount } from '../runtime/accounts/accounts.js';
import { openDb, type Db } from '../runtime/storage/dialect.js';
import { migrateToLatest } from '../runtime/storage/migrate.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** True when the module at `url` is the script being run (tsx bench/x.ts). */
export function isMain(url: string): boolean {
  return process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(url);
}

/** The typical request of every HTTP benchmark and of the in-process validation benchmark. */
export const MODEL = 'vendor_b/family_c-2.6/reference-to-video';
export const TYPICAL_INPUT = {
  prompt: 'character1 hands character2 a red umbrella while rain starts to fall on the market square',
  aspect_ratio: '9:16',
  duration_seconds: 8,
  resolution: '1080p',
  reference_image_urls: ['https://example.com/refs/woman.png', 'https://example.com/refs/man.png'],
  reference_video_urls: ['https://example.com/refs/walk.mp4'],
} as const;
export const TYPICAL_BODY = JSON.stringify({ model: MODEL, input: TYPICAL_INPUT });
/**
 * The typical request without its external reference clip, for benches whose tasks run to the end:
 * the check before the run fetches a billed clip to measure it, and a bench sends no traffic off
 * this machine.
 */
export const RUNNING_INPUT = Object.fromEntries(
  Object.entries(TYPICAL_INPUT).filter(([field]) => field !== 'reference_video_urls'),
);
export const RUNNING_BODY = JSON.stringify({ model: MODEL, input: RUNNING_INPUT });
/** Enough for any load the bench makes (each task holds a few hundred credits). */
export const PLENTY_OF_CREDITS = 1_000_000_000_000;

export interface RunMode {
  quick: boolean;
}

// ---------------------------------------------------------------------------------------------
// Processes

const children = new Set<ChildProcess>();
function killAll(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}
process.once('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killAll();
    process.exit(130);
  });
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export { sleep };

export interface Spawned {
  child: ChildProcess;
  pid: number;
  url: string;
  logPath: string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

/** Spawns a process whose output goes to a file (never through this process) and waits until `ready` answers 200. */
export async function spawnHttpProcess(
  args: string[],
  options: { env: NodeJS.ProcessEnv; port: number; logPath: string; readyPath: string; cwd?: string; label: string },
): Promise<Spawned> {
  const out = openSync(options.logPath, 'a');
  const child = spawn(process.execPath, args, {
    cwd: options.cwd ?? ROOT,
    env: options.env,
    stdio: ['ignore', out, out],
  });
  closeSync(out);
  children.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', () => children.delete(child));
  const url = `http://127.0.0.1:${options.port}`;
  const stop = async (graceMs = 15_000) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };
  const until = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `${options.label} exited (${child.exitCode ?? child.signalCode}) before answering: ${tail(options.logPath)}`,
      );
    }
    try {
      const response = await fetch(`${url}${options.readyPath}`, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (response.status === 200) break;
    } catch {
      /* not up yet */
    }
    if (Date.now() > until) {
      await stop(1000);
      throw new Error(`${options.label} did not answer within 90 s: ${tail(options.logPath)}`);
    }
    await sleep(100);
  }
  return { child, pid: child.pid!, url, logPath: options.logPath, stop };
}

function tail(path: string): string {
  try {
    return readFileSync(path, 'utf8').slice(-1500);
  } catch {
    return '(no log)';
  }
}

export interface ServiceProcess extends Spawned {
  dir: string;
  dbUrl: string;
}

export interface ServiceOptions {
  /** MEDIAFORGE_* settings on top of the bench defaults. */
  env?: Record<string, string>;
  /** Database URL; default a fresh SQLite file in the process's own directory. */
  dbUrl?: string;
  /** Use this directory (and its SQLite file); it is left for the caller to remove unless removeDir. */
  dir?: string;
  /** Remove `dir` when the process stops (a directory made for this process alone). */
  removeDir?: boolean;
  /** Extra node flags (--cpu-prof ...). */
  nodeArgs?: string[];
  role?: 'api' | 'worker' | 'all';
  label?: string;
}

/** A directory and SQLite URL for a service, with the schema migrated and `setup` run on it first. */
export async function prepareDatabase<T>(dbUrl: string, setup: (db: Db) => Promise<T>): Promise<T> {
  const db = await openDb(dbUrl);
  try {
    await migrateToLatest(db);
    return await setup(db);
  } finally {
    await db.close();
  }
}

export function newServiceDir(): string {
  return mkdtempSync(join(tmpdir(), 'mediaforge-bench-'));
}

export function sqliteUrl(dir: string): string {
  return `sqlite:${join(dir, 'db.sqlite')}`;
}

/** `node bin/mediaforge.js serve --migrate` on a free port, logging to <dir>/service.log. */
export async function startService(options: ServiceOptions = {}): Promise<ServiceProcess> {
  const ownDir = options.dir === undefined || options.removeDir === true;
  const dir = options.dir ?? newServiceDir();
  const dbUrl = options.dbUrl ?? sqliteUrl(dir);
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    MEDIAFORGE_DB: dbUrl,
    MEDIAFORGE_DATA_DIR: dir,
    MEDIAFORGE_SECRET: 'bench-secret',
    // The limiter still runs on every request; it just never refuses during a benchmark.
    MEDIAFORGE_RATE_LIMIT_PER_MINUTE: '1000000000',
    MEDIAFORGE_ROLE: options.role ?? 'all',
    // The typical request's clip (example.com) is billed by length: its check would fetch it, off this
    // machine. The check lane takes nothing here; bench/reference-check.ts, which measures it, opens it.
    MEDIAFORGE_WORKER_CHECK_CONCURRENCY: '0',
    ...options.env,
  };
  const args = [
    ...(options.nodeArgs ?? []),
    join(ROOT, 'bin/mediaforge.js'),
    'serve',
    '--migrate',
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
  ];
  let spawned: Spawned;
  try {
    spawned = await spawnHttpProcess(args, {
      env,
      port,
      logPath: join(dir, `service-${port}.log`),
      readyPath: '/healthz',
      label: options.label ?? 'mediaforge serve',
    });
  } catch (error) {
    if (ownDir) rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    ...spawned,
    dir,
    dbUrl,
    async stop(graceMs) {
      await spawned.stop(graceMs);
      if (ownDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Accounts with plenty of credits, written before the service starts (or beside it: SQLite WAL, PostgreSQL). */
export async function createAccounts(
  dbUrl: string,
  count: number,
  credits = PLENTY_OF_CREDITS,
): Promise<CreatedAccount[]> {
  return prepareDatabase(dbUrl, async (db) => {
    const out: CreatedAccount[] = [];
    for (let i = 0; i < count; i++) out.push(await createAccount(db, { credits, now: Date.now() }));
    return out;
  });
}

/** Resident set size of a process, in MiB (Linux /proc). */
export function rssMb(pid: number): number | undefined {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** CPU time (user + system) a process has used, in ms (Linux /proc; 100 ticks a second). */
export function cpuMs(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /, '')
      .split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/**
 * Waits until a service process is quiet (at most 10 % of a core over 200 ms; at most `maxMs`), so
 * that work left from one run (its worker catching up) does not weigh on the next measurement.
 */
export async function settle(pid: number, maxMs = 15_000): Promise<void> {
  const until = Date.now() + maxMs;
  let before = cpuMs(pid);
  while (before !== undefined && Date.now() < until) {
    await sleep(200);
    const after = cpuMs(pid);
    if (after === undefined || after - before <= 20) return;
    before = after;
  }
}

// ---------------------------------------------------------------------------------------------
// Load

export interface LoadResult {
  /** 2xx answers per second. */
  rps: number;
  ok: number;
  non2xx: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  seconds: number;
  statusCodes: Record<string, number>;
}

function summarize(result: CannonResult): LoadResult {
  const statusCodes = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, Number(s.count)]),
  );
  const ok = Number(result['2xx'] ?? 0);
  return {
    rps: ok / result.duration,
    ok,
    non2xx: result.non2xx,
    errors: result.errors,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    seconds: result.duration,
    statusCodes,
  };
}

export async function cannon(options: CannonOptions): Promise<LoadResult> {
  const result = await autocannon({ timeout: 30, ...options });
  return summarize(result);
}

export interface RequestShape {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** A fresh Idempotency-Key on every request. */
  uniqueIdempotencyKey?: boolean;
  /** One API key per connection, taken in turn from this list (else headers.authorization). */
  keysPerConnection?: string[];
}

let idempotencyCounter = 0;
const runId = `${process.pid.toString(36)}-${Date.now().toString(36)}`;

/** autocannon options for a request shape: per-request Idempotency-Keys, per-connection API keys. */
export function cannonOptions(
  url: string,
  shape: RequestShape,
  connections: number,
  seconds: number,
  overallRate?: number,
): CannonOptions {
  const headers = { ...(shape.body ? { 'content-type': 'application/json' } : {}), ...shape.headers };
  let nextKey = 0;
  const request = (connectionHeaders: Record<string, string>) => ({
    method: shape.method,
    path: shape.path,
    headers: connectionHeaders,
    body: shape.body,
    ...(shape.uniqueIdempotencyKey
      ? {
          setupRequest: (req: { headers?: Record<string, string> }) => {
            req.headers = { ...req.headers, 'idempotency-key': `bench-${runId}-${++idempotencyCounter}` };
            return req;
          },
        }
      : {}),
  });
  return {
    url,
    connections,
    duration: seconds,
    ...(overallRate ? { overallRate } : {}),
    requests: [request(headers)],
    // Each connection gets its own request objects (autocannon shares the array otherwise).
    setupClient: (client) => {
      const own = shape.keysPerConnection
        ? { ...headers, authorization: `Bearer ${shape.keysPerConnection[nextKey++ % shape.keysPerConnection.length]}` }
        : headers;
      client.setRequests([request(own)]);
    },
  };
}

export interface Durations {
  /** The longest wait for a service to go quiet before a run. */
  settleMs: number;
  warmupSeconds: number;
  peakSeconds: number;
  halfSeconds: number;
}

export function durations(mode: RunMode): Durations {
  return mode.quick
    ? { settleMs: 1500, warmupSeconds: 1, peakSeconds: 2, halfSeconds: 2 }
    : { settleMs: 15_000, warmupSeconds: 3, peakSeconds: 10, halfSeconds: 8 };
}

/**
 * Refuses a run whose answers were not 2xx (more than 1 %): its rate would measure error handling.
 * A run with no answer at all is refused too, unless `allowNone` (runs that are summed with others).
 */
export function checkMostlyOk(what: string, r: LoadResult, allowNone = false): void {
  const total = r.ok + r.non2xx;
  if (total === 0 && !allowNone)
    throw new Error(`${what}: no answer completed within the ${r.seconds} s run (${r.errors} errors)`);
  if (r.non2xx > total * 0.01)
    throw new Error(
      `${what}: ${r.non2xx} of ${total} answers were not 2xx (${JSON.stringify(r.statusCodes)}), ${r.errors} errors`,
    );
}

/** 2xx per second over several runs of one kind (their answers over their time). */
export function pooledRate(what: string, runs: LoadResult[]): number {
  const ok = runs.reduce((a, r) => a + r.ok, 0);
  if (ok === 0) throw new Error(`${what}: no answer completed in ${runs.length} runs`);
  return ok / runs.reduce((a, r) => a + r.seconds, 0);
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

export const DEFAULT_PG = 'postgres://postgres@127.0.0.1:5432/test';

/** The server to use (MEDIAFORGE_TEST_PG, else the local default) when it answers within 3 s. */
export async function reachablePostgres(): Promise<string | undefined> {
  const url = process.env.MEDIAFORGE_TEST_PG || DEFAULT_PG;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return url;
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => {});
  }
}

export async function withPg<T>(server: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: server, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** A fresh schema on `server` and the URL that puts a service in it; drop it with dropSchema. */
export async function freshSchema(server: string): Promise<{ schema: string; url: string }> {
  const schema = `bench_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  await withPg(server, (client) => client.query(`CREATE SCHEMA ${schema}`));
  return {
    schema,
    url: `${server}${server.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
  };
}

export async function dropSchema(server: string, schema: string): Promise<void> {
  await withPg(server, (client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
}

// ---------------------------------------------------------------------------------------------
// Numbers

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}

export function round(value: number | null | undefined, digits = 3): number | null {
  if (value === null || value === undefined || !Number.isFinite(value)) return null;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** A figure and the notes explaining how it was obtained (or why it is null). */
export interface BenchOutput {
  figures: Record<string, number | null>;
  notes: string[];
}

/** The three service endpoints the HTTP figures load. */
export type Endpoint = 'quote' | 'recordInfo' | 'createTask';

/** Creates one task with the typical body and returns its id (the task recordInfo reads; queued for the run when the simulator's latency is long). */
export async function createOneTask(url: string, apiKey: string): Promise<string> {
  const created = await fetch(`${url}/api/v1/jobs/createTask`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: TYPICAL_BODY,
  });
  const body = (await created.json()) as { data?: { taskId?: string } };
  if (created.status !== 202 || !body.data?.taskId)
    throw new Error(`createTask: ${created.status} ${JSON.stringify(body)}`);
  return body.data.taskId;
}

/** What each endpoint's load sends with this key: recordInfo reads `taskId`, createTask sends a fresh Idempotency-Key each time. */
export function endpointShapes(apiKey: string, taskId: string): Record<Endpoint, RequestShape> {
  const auth = { authorization: `Bearer ${apiKey}` };
  return {
    quote: { method: 'POST', path: '/api/v1/jobs/quote', headers: auth, body: TYPICAL_BODY },
    recordInfo: { method: 'GET', path: `/api/v1/jobs/recordInfo?taskId=${encodeURIComponent(taskId)}`, headers: auth },
    createTask: {
      method: 'POST',
      path: '/api/v1/jobs/createTask',
      headers: auth,
      body: TYPICAL_BODY,
      uniqueIdempotencyKey: true,
    },
  };
}
