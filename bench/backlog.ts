/**
 * The API while the worker drains a backlog (issue 42 point 4): `apiP99MsDuringBacklog`.
 *
 * A full `npm run bench` (2026-11-28) saw recordInfo answer with p99 2.9 s right after the
 * createTask run had left thousands of tasks for the worker, while quote, measured before, answered
 * in milliseconds. This bench makes that backlog on purpose and measures the API through it:
 * 1. An API-only process (`serve --role api`: no worker) on SQLite accepts the backlog's tasks
 *    (simulator latency 0, 16 accounts so the worker's per-account cap does not bound the drain), and
 *    recordInfo's and quote's peak rates are measured on it (autocannon, closed loop, no worker).
 * 2. It stops; the embedded default (`--role all`: API and worker in one process) starts on the same
 *    database, and its worker drains the backlog while recordInfo, then quote, run open-loop at half
 *    their peak (bench/paced-load.ts), each after a second of the same load that is not counted (the
 *    new process's warm-up). The unfinished tasks are counted before and after each window:
 *    a window the backlog did not last through says so in the notes.
 * The figure is the larger of the two p99s. For comparison the same paced loads ran on the API-only
 * process before it stopped (`…P99MsWithoutWorker`): the difference is what the worker costs the API.
 *
 * `npx tsx bench/backlog.ts [--quick] [--tasks=N]`
 */
import { Agent } from 'node:http';
import { rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { TERMINAL_STATES } from '../runtime/tasks/states.js';
import { send } from './http-client.js';
import { pacedLoad, type PacedResult } from './paced-load.js';
import {
  cannon,
  cannonOptions,
  checkMostlyOk,
  createAccounts,
  createOneTask,
  isMain,
  newServiceDir,
  round,
  RUNNING_BODY,
  settle,
  sqliteUrl,
  startService,
  TYPICAL_BODY,
  type BenchOutput,
  type RequestShape,
  type RunMode,
} from './support.js';

const ACCOUNTS = 16;
const WARM_UP_SECONDS = 1;
const CONNECTIONS = 50;
const TERMINAL = TERMINAL_STATES.map((s) => `'${s}'`).join(', ');
/** Unfinished tasks by state: a backlog that moves from queued to running is being worked on even before any finishes. */
const UNFINISHED_SQL = `SELECT state, COUNT(*) AS n FROM tasks WHERE state NOT IN (${TERMINAL}) GROUP BY state ORDER BY state`;

type Loaded = 'recordInfo' | 'quote';

export async function benchBacklog(
  mode: RunMode & {
    tasks?: number;
    /** Node options of the process that drains the backlog (bench/profile.ts backlog: --cpu-prof). */
    serviceNodeArgs?: string[];
  },
): Promise<BenchOutput> {
  const tasks = mode.tasks ?? (mode.quick ? 5_000 : 20_000);
  const peakSeconds = mode.quick ? 2 : 4;
  const windowSeconds = mode.quick ? 3 : 5;
  const dir = newServiceDir();
  const dbUrl = sqliteUrl(dir);
  const env = { MEDIAFORGE_SIMULATOR_LATENCY_MS: '0' };
  try {
    const accounts = await createAccounts(dbUrl, ACCOUNTS);
    const keys = accounts.map((a) => a.apiKey);
    const auth = { authorization: `Bearer ${keys[0]}` };

    // 1. The backlog, accepted by a process without a worker; the peaks and the paced loads without one.
    const api = await startService({ dir, dbUrl, role: 'api', env, label: 'API-only service' });
    const shapes: Record<Loaded, RequestShape> = {
      recordInfo: { method: 'GET', path: '', headers: auth },
      quote: { method: 'POST', path: '/api/v1/jobs/quote', headers: auth, body: TYPICAL_BODY },
    };
    const peak: Partial<Record<Loaded, number>> = {};
    const withoutWorker: Partial<Record<Loaded, PacedResult>> = {};
    let createSeconds = NaN;
    try {
      // One task of the backlog's kind (it runs to the end: no external clip), for recordInfo to read.
      const taskId = await createOneTask(api.url, keys[0], RUNNING_BODY);
      shapes.recordInfo.path = `/api/v1/jobs/recordInfo?taskId=${encodeURIComponent(taskId)}`;
      const started = performance.now();
      await createMany(api.url, keys, tasks - 1);
      createSeconds = (performance.now() - started) / 1000;
      for (const name of ['recordInfo', 'quote'] as const) {
        await settle(api.pid, 5000);
        const run = await cannon(cannonOptions(api.url, shapes[name], CONNECTIONS, peakSeconds));
        checkMostlyOk(`${name} without a worker`, run);
        peak[name] = run.rps;
        await settle(api.pid, 5000);
        withoutWorker[name] = await pacedLoad(api.url, shapes[name], half(run.rps, windowSeconds));
      }
    } finally {
      await api.stop();
    }

    // 2. The embedded default drains it while the API is loaded at half its peak.
    const db = new Database(dbUrl.slice('sqlite:'.length), { readonly: true, fileMustExist: true });
    const byState = db.prepare(UNFINISHED_SQL);
    const unfinished = () => {
      const rows = byState.all() as { state: string; n: number }[];
      return { n: rows.reduce((a, r) => a + r.n, 0), text: rows.map((r) => `${r.state} ${r.n}`).join(', ') || 'none' };
    };
    const during: Partial<
      Record<Loaded, PacedResult & { before: ReturnType<typeof unfinished>; after: ReturnType<typeof unfinished> }>
    > = {};
    const full = await startService({
      dir,
      dbUrl,
      env,
      label: 'service (API and worker)',
      nodeArgs: mode.serviceNodeArgs,
    });
    try {
      for (const name of ['recordInfo', 'quote'] as const) {
        // A new process compiles as it goes: a second of the same load first, not counted, so the
        // window measures the worker's share of a warm loop, not the JIT's warm-up.
        await pacedLoad(full.url, shapes[name], half(peak[name]!, WARM_UP_SECONDS));
        const before = unfinished();
        const run = await pacedLoad(full.url, shapes[name], half(peak[name]!, windowSeconds));
        during[name] = { ...run, before, after: unfinished() };
      }
    } finally {
      await full.stop();
      db.close();
    }

    const p99 = (r: PacedResult | undefined) => round(r?.p99Ms, 2);
    const drainedPerSec = (name: Loaded) => {
      const r = during[name]!;
      return Math.round((r.before.n - r.after.n) / r.seconds);
    };
    return {
      figures: {
        apiP99MsDuringBacklog: round(Math.max(during.recordInfo!.p99Ms, during.quote!.p99Ms), 2),
        recordInfoP99MsDuringBacklog: p99(during.recordInfo),
        quoteP99MsDuringBacklog: p99(during.quote),
        recordInfoP99MsWithoutWorker: p99(withoutWorker.recordInfo),
        quoteP99MsWithoutWorker: p99(withoutWorker.quote),
      },
      notes: [
        `backlog: ${tasks} tasks accepted by an API-only process in ${round(createSeconds, 1)} s (${ACCOUNTS} accounts, simulator latency 0); ` +
          `peaks without a worker: recordInfo ${Math.round(peak.recordInfo!)}/s, quote ${Math.round(peak.quote!)}/s; ` +
          (['recordInfo', 'quote'] as const)
            .map((name) => {
              const r = during[name]!;
              return (
                `${name} at ${Math.round(peak[name]! / 2)}/s for ${windowSeconds} s while the worker drained: p50 ${round(r.p50Ms, 1)} ms, p99 ${round(r.p99Ms, 1)} ms, max ${round(r.maxMs, 0)} ms, ` +
                `${r.non2xx} non-2xx, ${r.errors} errors, client lag p99 ${round(r.lagP99Ms, 1)} ms; unfinished ${r.before.n} (${r.before.text}) -> ${r.after.n} (${r.after.text}), ${drainedPerSec(name)}/s` +
                (r.after.n === 0 ? ' (the backlog ran out within the window)' : '') +
                `; without a worker p50 ${round(withoutWorker[name]!.p50Ms, 1)} ms, p99 ${round(withoutWorker[name]!.p99Ms, 1)} ms`
              );
            })
            .join('; '),
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function half(rps: number, seconds: number) {
  return { rate: Math.max(1, rps / 2), seconds, connections: CONNECTIONS };
}

/** `count` tasks, CONNECTIONS at a time, the accounts' keys in turn. */
async function createMany(url: string, keys: string[], count: number): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const shape: RequestShape = {
    method: 'POST',
    path: '/api/v1/jobs/createTask',
    body: RUNNING_BODY,
    uniqueIdempotencyKey: true,
    keysPerConnection: keys,
  };
  let next = 0;
  const failures: number[] = [];
  try {
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (next < count) {
          next++;
          const status = await send(agent, new URL(url), shape);
          if (status !== 202) failures.push(status);
        }
      }),
    );
  } finally {
    agent.destroy();
  }
  if (failures.length) throw new Error(`createTask failed ${failures.length} times (first status ${failures[0]})`);
}

if (isMain(import.meta.url)) {
  const arg = process.argv.find((a) => /^--tasks=\d+$/.test(a));
  console.log(
    JSON.stringify(
      await benchBacklog({
        quick: process.argv.includes('--quick'),
        tasks: arg ? Number(arg.split('=')[1]) : undefined,
      }),
    ),
  );
}
