/**
 * Tasks created AND finished per second at steady state (issue 30): the embedded default (the
 * simulator, latency 0; no callBackUrl, so no webhooks) on SQLite, then on a fresh PostgreSQL schema.
 *
 * The bench creates tasks (the typical request without its external clip, 8 accounts so that the
 * worker's per-account cap does not bound it, 16 requests at a time) while at most BACKLOG tasks
 * are unfinished: creation follows what the worker finishes, a rate the service sustains. Finished
 * tasks are counted in the service's database (tasks in a terminal state, read every 100 ms beside
 * it: SQLite read-only in WAL, PostgreSQL on its own connection). After a warm-up, the window's
 * rate is (finished at its end - finished at its start) / its length; A B B A (full run) or A B
 * (--quick), pooled per engine; the backlog drains and the process goes quiet between runs.
 *
 * `npx tsx bench/end-to-end.ts [--quick] [--sqlite | --pg] [--worker-process]`: one engine only, and
 * the worker in a process of its own beside the API (the CPU figure is then both processes').
 */
import { Agent } from 'node:http';
import { availableParallelism } from 'node:os';
import Database from 'better-sqlite3';
import pg from 'pg';
import { TERMINAL_STATES } from '../runtime/tasks/states.js';
import { send } from './http-client.js';
import {
  cpuMs,
  ownCpuMs,
  createAccounts,
  dropSchema,
  freshSchema,
  isMain,
  newServiceDir,
  reachablePostgres,
  round,
  RUNNING_BODY,
  settle,
  sleep,
  sqliteUrl,
  startService,
  type BenchOutput,
  type RunMode,
  type ServiceProcess,
} from './support.js';

/** Unfinished tasks allowed at once: twice the worker's default concurrency (32). */
const BACKLOG = 64;
const CREATORS = 16;
const ACCOUNTS = 8;
const FINISHED_SQL = `SELECT COUNT(*) AS n FROM tasks WHERE state IN (${TERMINAL_STATES.map((s) => `'${s}'`).join(', ')})`;

interface Engine {
  name: 'sqlite' | 'pg';
  /** The processes whose CPU is the service's, the one answering HTTP first: one, or the API and its worker process. */
  processes: ServiceProcess[];
  keys: string[];
  finished(): Promise<number>;
  close(): Promise<void>;
}

interface Window {
  finished: number;
  created: number;
  seconds: number;
  /** The service's CPU time over the window (ms, /proc; every process of it). */
  cpuMs: number;
  /**
   * The bench's own CPU time over the window (ms): its creators and its counting share the machine's
   * cores with the service, so a rate the bench cannot drive faster shows here, not as the service's.
   */
  benchCpuMs: number;
  /** Unfinished tasks on average over the window (near BACKLOG: the worker, not creation, bounds the rate). */
  meanUnfinished: number;
}

/** One run: create under the backlog bound; the window after the warm-up counts what finished. */
async function steadyRun(engine: Engine, warmupSeconds: number, windowSeconds: number): Promise<Window> {
  const agent = new Agent({ keepAlive: true, maxSockets: CREATORS });
  const base = new URL(engine.processes[0].url);
  const shape = {
    method: 'POST' as const,
    path: '/api/v1/jobs/createTask',
    body: RUNNING_BODY,
    uniqueIdempotencyKey: true,
    keysPerConnection: engine.keys,
  };
  const finishedBefore = await engine.finished();
  let created = 0;
  let finished = finishedBefore;
  let failures = 0;
  let stop = false;
  let inWindow = false;
  const unfinished: number[] = [];
  const observer = (async () => {
    while (!stop) {
      finished = await engine.finished();
      if (inWindow) unfinished.push(created - (finished - finishedBefore));
      await sleep(100);
    }
  })();
  const creators = Array.from({ length: CREATORS }, async () => {
    while (!stop) {
      if (created - (finished - finishedBefore) >= BACKLOG) {
        await sleep(5);
        continue;
      }
      created++;
      const status = await send(agent, base, shape).catch(() => 0);
      if (status !== 202) {
        created--;
        if (++failures > 10) throw new Error(`createTask on ${engine.name} failed ${failures} times (last ${status})`);
      }
    }
  });
  try {
    await Promise.race([sleep(warmupSeconds * 1000), ...creators]);
    const t0 = performance.now();
    const [f0, c0, cpu0, bench0] = [await engine.finished(), created, serviceCpuMs(engine), ownCpuMs()];
    inWindow = true;
    await Promise.race([sleep(windowSeconds * 1000), ...creators]);
    const [f1, c1, cpu1, bench1] = [await engine.finished(), created, serviceCpuMs(engine), ownCpuMs()];
    const seconds = (performance.now() - t0) / 1000;
    const meanUnfinished = unfinished.reduce((a, n) => a + n, 0) / Math.max(1, unfinished.length);
    return {
      finished: f1 - f0,
      created: c1 - c0,
      seconds,
      cpuMs: cpu1 - cpu0,
      benchCpuMs: bench1 - bench0,
      meanUnfinished,
    };
  } finally {
    stop = true;
    await Promise.allSettled([observer, ...creators]);
    agent.destroy();
    // The backlog drains before the next run starts.
    const until = performance.now() + 60_000;
    while ((await engine.finished()) - finishedBefore < created && performance.now() < until) await sleep(100);
    for (const process of engine.processes) await settle(process.pid, 5000);
  }
}

const coresUsed = (cpuMs: number, seconds: number) => (cpuMs / 1000 / seconds).toFixed(2);

function serviceCpuMs(engine: Engine): number {
  return engine.processes.reduce((sum, process) => sum + (cpuMs(process.pid) ?? Number.NaN), 0);
}

/**
 * The service's processes: one (`--role all`, the embedded default), or with `workerProcess` an
 * API process (`--role api`, which migrates) and then a worker process (`--role worker`) on the
 * same database and data folder. Stopped worker first.
 */
async function startProcesses(
  options: { dir?: string; dbUrl: string; env: Record<string, string>; nodeArgs?: string[]; workerProcess?: boolean },
  label: string,
): Promise<{ processes: ServiceProcess[]; stop(): Promise<void> }> {
  const { dir, dbUrl, env, nodeArgs, workerProcess } = options;
  const api = await startService({
    dir,
    dbUrl,
    removeDir: dir !== undefined,
    env,
    nodeArgs,
    role: workerProcess ? 'api' : 'all',
    label: workerProcess ? `${label} (API)` : label,
  });
  if (!workerProcess) return { processes: [api], stop: () => api.stop() };
  try {
    const worker = await startService({
      dir: api.dir,
      dbUrl,
      env,
      nodeArgs,
      role: 'worker',
      label: `${label} (worker)`,
    });
    return {
      processes: [api, worker],
      async stop() {
        await worker.stop();
        await api.stop();
      },
    };
  } catch (error) {
    await api.stop();
    throw error;
  }
}

interface ProcessOptions {
  env: Record<string, string>;
  nodeArgs?: string[];
  workerProcess?: boolean;
}

async function sqliteEngine(options: ProcessOptions): Promise<Engine> {
  const dir = newServiceDir();
  const dbUrl = sqliteUrl(dir);
  const accounts = await createAccounts(dbUrl, ACCOUNTS);
  const started = await startProcesses({ ...options, dir, dbUrl }, 'service on SQLite');
  const db = new Database(dbUrl.slice('sqlite:'.length), { readonly: true, fileMustExist: true });
  const count = db.prepare(FINISHED_SQL).pluck();
  return {
    name: 'sqlite',
    processes: started.processes,
    keys: accounts.map((a) => a.apiKey),
    finished: async () => Number(count.get()),
    async close() {
      db.close();
      await started.stop();
    },
  };
}

async function pgEngine(server: string, options: ProcessOptions): Promise<Engine> {
  const { schema, url } = await freshSchema(server);
  try {
    const accounts = await createAccounts(url, ACCOUNTS);
    const started = await startProcesses({ ...options, dbUrl: url }, 'service on PostgreSQL');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return {
      name: 'pg',
      processes: started.processes,
      keys: accounts.map((a) => a.apiKey),
      finished: async () => Number((await client.query(FINISHED_SQL)).rows[0].n),
      async close() {
        await client.end().catch(() => {});
        await started.stop();
        await dropSchema(server, schema);
      },
    };
  } catch (error) {
    await dropSchema(server, schema);
    throw error;
  }
}

export async function benchEndToEnd(
  mode: RunMode & {
    /** Node options of the service process (bench/profile.ts: --cpu-prof). */
    serviceNodeArgs?: string[];
    /** One engine only (bench/profile.ts profiles one at a time). */
    only?: Engine['name'];
    /** More environment for the service process (bench/profile.ts: MEDIAFORGE_SQLSTATS_FILE). */
    serviceEnv?: Record<string, string>;
    /** The worker in a process of its own beside the API (`--worker-process`; issue 30 step 1). */
    workerProcess?: boolean;
  },
): Promise<BenchOutput> {
  const warmup = mode.quick ? 3 : 5;
  const window = mode.quick ? 5 : 15;
  const env = { MEDIAFORGE_SIMULATOR_LATENCY_MS: '0', ...mode.serviceEnv };
  const server = mode.only === 'sqlite' ? undefined : await reachablePostgres();
  const engines: Engine[] = [];
  try {
    const processOptions = { env, nodeArgs: mode.serviceNodeArgs, workerProcess: mode.workerProcess };
    if (mode.only !== 'pg') engines.push(await sqliteEngine(processOptions));
    if (server) engines.push(await pgEngine(server, processOptions));
    const order = engines.length === 2 ? (mode.quick ? [0, 1] : [0, 1, 1, 0]) : mode.quick ? [0] : [0, 0];
    const runs: { engine: Engine; w: Window }[] = [];
    for (const i of order) runs.push({ engine: engines[i], w: await steadyRun(engines[i], warmup, window) });
    const pooled = (name: Engine['name']) => {
      const own = runs.filter((r) => r.engine.name === name).map((r) => r.w);
      const seconds = own.reduce((a, w) => a + w.seconds, 0);
      const finished = own.reduce((a, w) => a + w.finished, 0);
      return {
        finished: finished / seconds,
        created: own.reduce((a, w) => a + w.created, 0) / seconds,
        cpuMsPerTask: own.reduce((a, w) => a + w.cpuMs, 0) / finished,
        benchCpuMsPerTask: own.reduce((a, w) => a + w.benchCpuMs, 0) / finished,
      };
    };
    const sqlite = pooled('sqlite');
    const pgRate = server ? pooled('pg') : undefined;
    return {
      figures: {
        tasksPerSecEndToEnd: round(sqlite.finished, 0),
        tasksCreatedPerSecEndToEnd: round(sqlite.created, 0),
        endToEndServiceCpuMsPerTask: round(sqlite.cpuMsPerTask, 2),
        endToEndBenchCpuMsPerTask: round(sqlite.benchCpuMsPerTask, 2),
        pgTasksPerSecEndToEnd: round(pgRate?.finished, 0),
        pgTasksCreatedPerSecEndToEnd: round(pgRate?.created, 0),
        pgEndToEndServiceCpuMsPerTask: round(pgRate?.cpuMsPerTask, 2),
        pgEndToEndBenchCpuMsPerTask: round(pgRate?.benchCpuMsPerTask, 2),
        pgTasksEndToEndVsSqlite: round(pgRate ? pgRate.finished / sqlite.finished : null, 3),
      },
      notes: [
        `end-to-end: simulator latency 0, no callBackUrl, ${ACCOUNTS} accounts, ${CREATORS} createTask calls at a time while at most ${BACKLOG} tasks are unfinished; ` +
          `finished = tasks in a terminal state in the service's database (polled every 100 ms); ${warmup} s warm-up then a ${window} s window per run, runs ${runs.map((r) => `${r.engine.name} ${(r.w.finished / r.w.seconds).toFixed(0)}/s finished, ${(r.w.created / r.w.seconds).toFixed(0)}/s created, ${r.w.meanUnfinished.toFixed(0)} unfinished on average, cores used: service ${coresUsed(r.w.cpuMs, r.w.seconds)}, bench ${coresUsed(r.w.benchCpuMs, r.w.seconds)} of ${availableParallelism()}`).join('; ')}; ` +
          "endToEndBenchCpuMsPerTask: the bench process's own CPU (its creators and counting) over the windows ÷ tasks finished in them; where service and bench together use every core, the rate is the machine's, not the service's alone; " +
          (mode.workerProcess
            ? "the worker in a process of its own (serve --role worker) beside the API (--role api); endToEndServiceCpuMsPerTask: both processes' CPU (/proc) over the windows ÷ tasks finished in them"
            : "endToEndServiceCpuMsPerTask: the service process's CPU (/proc) over the windows ÷ tasks finished in them (the API and the worker: one process)") +
          (server ? '' : '; no PostgreSQL answered: pgTasksPerSecEndToEnd is null'),
      ],
    };
  } finally {
    for (const engine of engines.reverse()) await engine.close().catch(() => {});
  }
}

if (isMain(import.meta.url)) {
  const only = process.argv.includes('--sqlite') ? 'sqlite' : process.argv.includes('--pg') ? 'pg' : undefined;
  console.log(
    JSON.stringify(
      await benchEndToEnd({
        quick: process.argv.includes('--quick'),
        only,
        workerProcess: process.argv.includes('--worker-process'),
      }),
    ),
  );
}
