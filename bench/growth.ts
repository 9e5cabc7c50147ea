/**
 * Costs as the database grows (issue 19). One SQLite database is seeded once per run with
 * 1,000,000 finished tasks of one key (bench/seed.ts; --quick: 200,000) and copied for each use:
 * - recordInfoAt1MVsEmpty, createTaskAt1MVsEmpty: the http.ts load (autocannon, 50 connections,
 *   warm-ups excluded) on a service over the seeded copy ÷ the same on a service over an empty
 *   database; both services up for the whole figure, runs alternating A B B A, each rate pooled
 *   over its two runs.
 * - listTasksP99MsAt1M: the key's task listing (GET /api/v1/jobs, 20 a page) with a cursor deep
 *   into the seeded tasks (and listTasksFirstPageP99MsAt1M, the first page): p99 over a fixed
 *   number of requests on a few connections, on the seeded service.
 * - workItemsDoneAt1MPerSec: the worker's claim statement (runtime/queue/claim.ts) taking and
 *   finishing a fixed number of due items, in this process, on a copy of the seeded database
 *   (its finished work items in the table) and on an empty one (workItemsDoneEmptyPerSec),
 *   alternating A B B A; workItemsDoneAt1MVsEmpty is their ratio. pgWorkItemsDoneAt1MVsEmpty: the
 *   same on PostgreSQL when one answers, the grown schema's tasks and work items written by
 *   generate_series.
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { newId } from '../runtime/ids.js';
import type { Config } from '../runtime/config.js';
import { openDb, type Db } from '../runtime/storage/dialect.js';
import { migrateToLatest } from '../runtime/storage/migrate.js';
import { claimItems } from '../runtime/queue/claim.js';
import { kindFilter, workLanes } from '../runtime/queue/lanes.js';
import { seedFinishedTasks, type Seeded } from './seed.js';
import {
  cannon,
  cannonOptions,
  checkMostlyOk,
  createAccounts,
  createOneTask,
  endpointShapes,
  dropSchema,
  freshSchema,
  isMain,
  MODEL,
  newServiceDir,
  percentile,
  pooledRate,
  reachablePostgres,
  round,
  settle,
  sqliteUrl,
  startService,
  type BenchOutput,
  type LoadResult,
  type RunMode,
  type ServiceProcess,
} from './support.js';

const CONNECTIONS = 50;
/** The listing's latency is its own, not a queue's: one connection, a fixed count of requests. */
const LIST_CONNECTIONS = 1;

export async function benchGrowth(mode: RunMode): Promise<BenchOutput> {
  const taskCount = mode.quick ? 200_000 : 1_000_000;
  const seconds = mode.quick ? 2 : 6;
  const warmup = mode.quick ? 1 : 2;
  const settleMs = mode.quick ? 1500 : 15_000;
  const figures: Record<string, number | null> = {};
  const notes: string[] = [];
  const seedDir = mkdtempSync(join(tmpdir(), 'mediaforge-growth-'));
  const seedPath = join(seedDir, 'seed.sqlite');
  try {
    const seeded = await seedFinishedTasks(seedPath, taskCount);
    notes.push(
      `growth: seeded ${taskCount.toLocaleString('en')} finished tasks of one key in ${seeded.seconds.toFixed(1)} s ` +
        '(task, settled hold, hold + settle ledger rows, a live Idempotency-Key row, run/poll/expire items done and a purge item pending, over the last day)' +
        (mode.quick ? '; --quick seeds 200,000, not 1,000,000' : ''),
    );
    Object.assign(
      figures,
      await httpFigures(seedPath, seeded, { seconds, warmup, settleMs, quick: mode.quick }, notes),
    );
    Object.assign(figures, await claimFigures(seedPath, mode.quick ? 3000 : 20_000, notes));
    Object.assign(figures, await pgClaimFigures(taskCount, mode.quick ? 3000 : 20_000, notes));
  } finally {
    rmSync(seedDir, { recursive: true, force: true });
  }
  return { figures, notes };
}

interface Timing {
  seconds: number;
  warmup: number;
  settleMs: number;
  quick: boolean;
}

/** A copy of the seeded file in a fresh service directory (the file a service over it opens). */
function copySeed(seedPath: string): { dir: string; dbUrl: string } {
  const dir = newServiceDir();
  copyFileSync(seedPath, join(dir, 'db.sqlite'));
  return { dir, dbUrl: sqliteUrl(dir) };
}

async function httpFigures(
  seedPath: string,
  seeded: Seeded,
  timing: Timing,
  notes: string[],
): Promise<Record<string, number | null>> {
  const emptyDir = newServiceDir();
  const [emptyAccount] = await createAccounts(sqliteUrl(emptyDir), 1);
  const grown = copySeed(seedPath);
  const env = { MEDIAFORGE_SIMULATOR_LATENCY_MS: String(10 * 60_000) };
  const started = await Promise.allSettled([
    startService({ dir: emptyDir, removeDir: true, env, label: 'service (empty)' }),
    startService({ dir: grown.dir, dbUrl: grown.dbUrl, removeDir: true, env, label: 'service (grown)' }),
  ]);
  const services = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  try {
    for (const s of started) if (s.status === 'rejected') throw s.reason;
    const [empty, grownService] = services;
    const sides = [
      { name: 'empty', service: empty, key: emptyAccount.apiKey },
      { name: 'grown', service: grownService, key: seeded.account.apiKey },
    ];
    const shapesOf = async (service: ServiceProcess, key: string) =>
      endpointShapes(key, await createOneTask(service.url, key));
    const shapes = [await shapesOf(empty, emptyAccount.apiKey), await shapesOf(grownService, seeded.account.apiKey)];
    const figures: Record<string, number | null> = {};
    const quiet = async () => {
      for (const side of sides) await settle(side.service.pid, timing.settleMs);
    };
    const rates: string[] = [];
    for (const endpoint of ['recordInfo', 'createTask'] as const) {
      for (let i = 0; i < sides.length; i++)
        await cannon(cannonOptions(sides[i].service.url, shapes[i][endpoint], CONNECTIONS, timing.warmup));
      const runs: LoadResult[][] = [[], []];
      for (const i of [0, 1, 1, 0]) {
        await quiet();
        const r = await cannon(cannonOptions(sides[i].service.url, shapes[i][endpoint], CONNECTIONS, timing.seconds));
        checkMostlyOk(`${endpoint} (${sides[i].name})`, r);
        runs[i].push(r);
      }
      const emptyRate = pooledRate(`${endpoint} (empty)`, runs[0]);
      const grownRate = pooledRate(`${endpoint} (grown)`, runs[1]);
      figures[`${endpoint}EmptyRps`] = round(emptyRate, 0);
      figures[`${endpoint}At1MRps`] = round(grownRate, 0);
      figures[`${endpoint}At1MVsEmpty`] = round(grownRate / emptyRate, 3);
      rates.push(
        `${endpoint} empty ${runs[0].map((r) => r.rps.toFixed(0)).join(', ')} / grown ${runs[1].map((r) => r.rps.toFixed(0)).join(', ')} req/s`,
      );
    }
    notes.push(
      `growth: ${CONNECTIONS} connections, runs A B B A of ${timing.seconds} s after ${timing.warmup} s warm-ups, each once both services are quiet (${rates.join('; ')}); ` +
        'recordInfo reads a task created before the runs (queued for the whole run), createTask sends a fresh Idempotency-Key each',
    );
    Object.assign(figures, await listFigures(grownService, seeded, timing.quick, notes));
    return figures;
  } finally {
    await Promise.all(services.map((s) => s.stop()));
  }
}

/** The listing's p99 on the seeded service: the first page, and a page nine tenths of the way down. */
async function listFigures(
  service: ServiceProcess,
  seeded: Seeded,
  quick: boolean,
  notes: string[],
): Promise<Record<string, number | null>> {
  const amount = quick ? 400 : 2000;
  const depth = Math.floor(seeded.tasks * 0.9);
  const deep = await deepCursor(service.dbUrl, seeded.keyId, depth);
  const auth = { authorization: `Bearer ${seeded.account.apiKey}` };
  const run = async (path: string) => {
    await timedGets(service.url, path, auth, Math.ceil(amount / 4)); // warm-up
    const latencies = await timedGets(service.url, path, auth, amount);
    return { p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
  };
  const first = await run('/api/v1/jobs?limit=20');
  const deepPage = await run(`/api/v1/jobs?limit=20&cursor=${deep}`);
  notes.push(
    `growth: listTasks on ${seeded.tasks.toLocaleString('en')} tasks of the key, 20 a page, ${amount} requests on ${LIST_CONNECTIONS} keep-alive connections after a warm-up, each timed from send to last byte: ` +
      `first page p50 ${first.p50.toFixed(2)} ms p99 ${first.p99.toFixed(2)} ms; cursor after the ${depth.toLocaleString('en')}th newest p50 ${deepPage.p50.toFixed(2)} ms p99 ${deepPage.p99.toFixed(2)} ms`,
  );
  return {
    listTasksP99MsAt1M: round(deepPage.p99, 2),
    listTasksP50MsAt1M: round(deepPage.p50, 2),
    listTasksFirstPageP99MsAt1M: round(first.p99, 2),
  };
}

/** `amount` GETs of one path over LIST_CONNECTIONS keep-alive connections; each request's time in ms. */
async function timedGets(base: string, path: string, headers: Record<string, string>, amount: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: LIST_CONNECTIONS });
  const latencies: number[] = [];
  let sent = 0;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const t0 = performance.now();
      const req = request(`${base}${path}`, { agent, headers }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode !== 200) reject(new Error(`GET ${path}: ${res.statusCode}`));
          else {
            latencies.push(performance.now() - t0);
            resolve();
          }
        });
      });
      req.on('error', reject);
      req.end();
    });
  const connection = async () => {
    while (sent < amount) {
      sent++;
      await one();
    }
  };
  try {
    await Promise.all(Array.from({ length: LIST_CONNECTIONS }, connection));
  } finally {
    agent.destroy();
  }
  return latencies;
}

/** The opaque cursor (runtime/storage/cursor.ts) positioned after the key's `index`th newest task. */
async function deepCursor(dbUrl: string, keyId: string, index: number): Promise<string> {
  const db = await openDb(dbUrl);
  try {
    const row = db
      .sqlite!.prepare(
        'SELECT created_at, id FROM tasks WHERE api_key_id = ? ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET ?',
      )
      .get(keyId, index) as { created_at: number; id: string };
    return Buffer.from(`${row.created_at}:${row.id}`).toString('base64url');
  } finally {
    await db.close();
  }
}

/** Accounts the claimed items belong to, and the lane's default cap on each (MEDIAFORGE_WORKER_ACCOUNT_CAP). */
const CLAIM_ACCOUNTS = 64;
const ACCOUNT_CAP = 8;
/** The task lane's default slots (MEDIAFORGE_WORKER_CONCURRENCY): the most one claim takes. */
const CLAIM_LIMIT = 32;

/** The claim rate on a copy of the seeded database and on an empty one, A B B A. */
async function claimFigures(seedPath: string, items: number, notes: string[]): Promise<Record<string, number | null>> {
  const emptyDir = newServiceDir();
  const grown = copySeed(seedPath);
  const dbs: Db[] = [];
  try {
    dbs.push(await openDb(sqliteUrl(emptyDir)));
    await migrateToLatest(dbs[0]);
    dbs.push(await openDb(grown.dbUrl));
    const runs: number[][] = [[], []];
    await claimRun(dbs[0], Math.ceil(items / 10)); // warm-up of the statements
    await claimRun(dbs[1], Math.ceil(items / 10));
    for (const i of [0, 1, 1, 0]) runs[i].push(await claimRun(dbs[i], items));
    const rate = (seconds: number[]) => (items * seconds.length) / seconds.reduce((a, b) => a + b, 0);
    notes.push(
      `growth: worker claims in this process (runtime/queue/claim.ts claimItems, at most ${CLAIM_LIMIT} a claim, cap ${ACCOUNT_CAP} per account, ${CLAIM_ACCOUNTS} accounts), ` +
        `each item then marked done as the worker does; ${items} due items per run, runs A B B A after a warm-up: empty ${runs[0].map((s) => (items / s).toFixed(0)).join(', ')} / grown ${runs[1].map((s) => (items / s).toFixed(0)).join(', ')} items/s`,
    );
    const empty = rate(runs[0]);
    const grownRate = rate(runs[1]);
    return {
      workItemsDoneEmptyPerSec: round(empty, 0),
      workItemsDoneAt1MPerSec: round(grownRate, 0),
      workItemsDoneAt1MVsEmpty: round(grownRate / empty, 3),
    };
  } finally {
    for (const db of dbs) await db.close();
    rmSync(emptyDir, { recursive: true, force: true });
    rmSync(grown.dir, { recursive: true, force: true });
  }
}

/**
 * The same claim rate on PostgreSQL: a schema holding `taskCount` finished tasks with their work
 * items (run, poll, expire done; purge pending), written by generate_series and analyzed, against
 * an empty schema, A B B A. The other rows of a task do not take part in a claim and are left out.
 */
export async function pgClaimFigures(
  taskCount: number,
  items: number,
  notes: string[],
): Promise<Record<string, number | null>> {
  const server = await reachablePostgres();
  if (!server) {
    notes.push(
      'growth: pgWorkItemsDoneAt1MVsEmpty is null: no PostgreSQL answered (MEDIAFORGE_TEST_PG or the local default)',
    );
    return { pgWorkItemsDoneAt1MPerSec: null, pgWorkItemsDoneAt1MVsEmpty: null };
  }
  const schemas: { schema: string; url: string }[] = [];
  const dbs: Db[] = [];
  try {
    for (let i = 0; i < 2; i++) {
      schemas.push(await freshSchema(server));
      dbs.push(await openDb(schemas[i].url));
      await migrateToLatest(dbs[i]);
    }
    const t0 = performance.now();
    const end = Date.now() - 10_000;
    const step = Math.floor((24 * 3600 * 1000) / taskCount);
    await sql`INSERT INTO tasks (id, account_id, api_key_id, model, state, input_json, request_id, progress,
        estimated_credits, max_credits, charged_credits, settled, warnings_json, deployment, created_at, updated_at,
        started_at, finished_at, deadline_at)
      SELECT 'task_' || md5(g::text), 'acct_seed', 'key_seed', ${MODEL}, 'succeeded', '{}', 'req_seed', 100, 176, 191,
        176, 1, '[]', 'simulator', c, c + 3000, c + 5, c + 3000, c + 1800000
      FROM generate_series(1, ${taskCount}::bigint) g, LATERAL (SELECT ${end}::bigint - (${taskCount}::bigint - g) * ${step}::bigint AS c) t`.execute(
      dbs[1].kysely,
    );
    await sql`INSERT INTO work_items (kind, task_id, due_at, attempts, done_at, created_at)
      SELECT k, id, CASE WHEN k = 'purge' THEN finished_at + 2592000000 ELSE created_at END, 1,
        CASE WHEN k = 'purge' THEN NULL ELSE finished_at END, created_at
      FROM tasks, (VALUES ('run'), ('expire'), ('poll'), ('purge')) v(k)`.execute(dbs[1].kysely);
    await sql`ANALYZE`.execute(dbs[1].kysely);
    const seeded = (performance.now() - t0) / 1000;
    const runs: number[][] = [[], []];
    await claimRun(dbs[0], Math.ceil(items / 10));
    await claimRun(dbs[1], Math.ceil(items / 10));
    for (const i of [0, 1, 1, 0]) runs[i].push(await claimRun(dbs[i], items));
    const rate = (seconds: number[]) => (items * seconds.length) / seconds.reduce((a, b) => a + b, 0);
    notes.push(
      `growth: the same claims on PostgreSQL (${server.replace(/\/\/[^@/]*@/, '//…@')}), ${taskCount.toLocaleString('en')} finished tasks and ${(taskCount * 4).toLocaleString('en')} work items written by generate_series and analyzed in ${seeded.toFixed(1)} s: ` +
        `empty ${runs[0].map((x) => (items / x).toFixed(0)).join(', ')} / grown ${runs[1].map((x) => (items / x).toFixed(0)).join(', ')} items/s`,
    );
    const empty = rate(runs[0]);
    const grownRate = rate(runs[1]);
    return {
      pgWorkItemsDoneEmptyPerSec: round(empty, 0),
      pgWorkItemsDoneAt1MPerSec: round(grownRate, 0),
      pgWorkItemsDoneAt1MVsEmpty: round(grownRate / empty, 3),
    };
  } finally {
    for (const db of dbs) await db.close();
    for (const { schema } of schemas) await dropSchema(server, schema);
  }
}

/** Writes `count` queued tasks with a due item each, then claims and finishes them all; the seconds the claims took. */
async function claimRun(db: Db, count: number): Promise<number> {
  const now = Date.now();
  for (let from = 0; from < count; from += 500) {
    const rows = Array.from({ length: Math.min(500, count - from) }, (_, k) => ({ i: from + k, id: newId('task') }));
    await db.kysely.transaction().execute(async (trx) => {
      await trx
        .insertInto('tasks')
        .values(
          rows.map(({ i, id }) => ({
            id,
            account_id: `acct_bench${i % CLAIM_ACCOUNTS}`,
            api_key_id: 'key_bench',
            model: MODEL,
            state: 'queued',
            input_json: '{}',
            callback_url: null,
            request_id: 'req_bench',
            progress: 0,
            estimated_credits: 1,
            max_credits: 1,
            charged_credits: null,
            settled: 0,
            error_code: null,
            error_message: null,
            output_json: null,
            warnings_json: '[]',
            deployment: null,
            deployment_handle: null,
            upstream_cost_micros: null,
            retry_of: null,
            retention_seconds: null,
            created_at: now,
            updated_at: now,
            started_at: null,
            finished_at: null,
            deadline_at: now + 1800_000,
            purged_at: null,
          })),
        )
        .execute();
      // A kind of the task lane that no handler knows: only the claim and the bookkeeping are measured.
      await trx
        .insertInto('work_items')
        .values(
          rows.map(({ i, id }) => ({
            kind: 'bench-claim',
            task_id: id,
            due_at: now - count + i,
            attempts: 0,
            created_at: now,
          })),
        )
        .execute();
    });
  }
  const config = { workerConcurrency: CLAIM_LIMIT, workerCheckConcurrency: 16, workerDeliveryConcurrency: 32 };
  const lanes = workLanes(config as Config);
  const kinds = kindFilter(lanes[0], lanes);
  const owner = newId('worker', 6);
  const t0 = performance.now();
  let done = 0;
  while (done < count) {
    const scope = { kinds, accountCap: ACCOUNT_CAP, now: Date.now() };
    const claimed = await claimItems(db, scope, owner, scope.now + 60_000, CLAIM_LIMIT);
    // Every item is due and none stays leased (each is done before the next claim): an empty claim is a fault.
    if (claimed.length === 0) throw new Error(`a claim took nothing with ${count - done} items due`);
    for (const item of claimed)
      await db.kysely
        .updateTable('work_items')
        .where('id', '=', item.id)
        .where('lease_owner', '=', owner)
        .set({ done_at: Date.now(), lease_until: null })
        .execute();
    done += claimed.length;
  }
  const seconds = (performance.now() - t0) / 1000;
  if (done !== count) throw new Error(`claimed ${done} of ${count} items`);
  return seconds;
}

if (isMain(import.meta.url)) {
  console.log(JSON.stringify(await benchGrowth({ quick: process.argv.includes('--quick') })));
}
