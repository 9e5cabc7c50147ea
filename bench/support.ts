/**
 * Shared pieces of the benchmarks: the typical request, run modes, the quiet-process wait, the
 * PostgreSQL probe and numbers. The service processes (support/service-process.ts) and the
 * autocannon wrapper (support/load.ts) are shared with the long load suite, so they live in
 * support/ and are re-exported here for the benchmarks.
 */
import { readFileSync } from 'node:fs';
import { type Agent, request } from 'node:http';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { LoadResult, RequestShape } from '../support/load.js';
import { sleep } from '../support/service-process.js';

export { cannon, cannonOptions, type LoadResult, type RequestShape } from '../support/load.js';
export {
  createAccounts,
  freePort,
  newServiceDir,
  PLENTY_OF_CREDITS,
  prepareDatabase,
  SERVICE_SECRET,
  type ServiceOptions,
  type ServiceProcess,
  type Spawned,
  sleep,
  spawnHttpProcess,
  sqliteUrl,
  startService,
} from '../support/service-process.js';

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

export interface RunMode {
  quick: boolean;
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

/** The bench process's own CPU time so far (ms): the load generator's share of the machine's cores. */
export function ownCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
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

/**
 * One HTTP call on a keep-alive agent: status, body bytes and milliseconds from send to the whole
 * answer. The body is counted and dropped as it comes, never decoded (autocannon 9 appends every
 * body to a string, a UTF-8 decode that costs more CPU than the server for large binary answers).
 */
export function timedCall(
  agent: Agent,
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; bytes: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const r = request(url, { method, headers, agent, timeout: 60_000 }, (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => (bytes += chunk.length));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, bytes, ms: performance.now() - started }));
    });
    r.on('timeout', () => r.destroy(new Error(`${method} ${url}: no answer within 60 s`)));
    r.on('error', reject);
    r.end(body);
  });
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
export function checkMostlyOk(
  what: string,
  r: Pick<LoadResult, 'ok' | 'non2xx' | 'errors' | 'seconds'> & { statusCodes?: LoadResult['statusCodes'] },
  allowNone = false,
): void {
  const total = r.ok + r.non2xx;
  if (total === 0 && !allowNone)
    throw new Error(`${what}: no answer completed within the ${r.seconds} s run (${r.errors} errors)`);
  if (r.non2xx > total * 0.01)
    throw new Error(
      `${what}: ${r.non2xx} of ${total} answers were not 2xx${r.statusCodes ? ` (${JSON.stringify(r.statusCodes)})` : ''}, ${r.errors} errors`,
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

/**
 * Creates one task (the typical body unless `body` says otherwise) and returns its id: the task
 * recordInfo reads, queued for the run when the simulator's latency is long.
 */
export async function createOneTask(url: string, apiKey: string, body = TYPICAL_BODY): Promise<string> {
  const created = await fetch(`${url}/api/v1/jobs/createTask`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body,
  });
  const answer = (await created.json()) as { data?: { taskId?: string } };
  if (created.status !== 202 || !answer.data?.taskId)
    throw new Error(`createTask: ${created.status} ${JSON.stringify(answer)}`);
  return answer.data.taskId;
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
