import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { createAccount } from '../../runtime/accounts/accounts.js';
import { openDb, type Db } from '../../runtime/storage/dialect.js';
import { migrateToLatest } from '../../runtime/storage/migrate.js';
import { addEndpoint } from '../../runtime/webhooks/admin.js';
import { maintenanceWorkHandlers } from '../../runtime/worker/maintenance.js';
import { checkLedger, dropTestSchema, startTestService, testDbUrl, type TestService } from '../support/service.js';
import { LOOPBACK, MODEL, startReceiver } from '../webhooks/support.js';
import {
  auditDeliveries,
  checkTaskRows,
  FAULT_CASES,
  isQuiet,
  snapshot,
  type FaultCase,
  type Snapshot,
} from './crash-support.js';
import { FAIL, recordCounts, spawnServer, type ServerProcess } from './support.js';

/**
 * Crash at every phase (issue 12, item 3). For each fault point of runtime/faults.ts, a real
 * `mediaforge serve` process is started with that point armed, two tasks are created (one the
 * simulator finishes, one it fails), and the process kills itself with SIGKILL on reaching the
 * point. The service is then started again on the same database and data directory, without
 * faults (in the test process: the same createService as `serve`, with nothing of the dead
 * process's memory, at a fraction of a second process's start-up CPU); the client retries, with
 * the same Idempotency-Key, every request that got no answer. Then, once the service is quiet:
 * - one task per Idempotency-Key, each terminal in the state the simulator gives it;
 * - each hold resolved exactly once, the ledger invariants hold (also at the moment of the crash);
 * - a crash inside a transaction left no row of it (no task, hold or key for createTask);
 * - every announcement reached the loopback receiver, signed, with its exact body, and the
 *   receiver's requests match the recorded attempts (see auditDeliveries in crash-support.ts).
 *
 * The one duplicate that cannot be avoided: the process dies after the receiver got an attempt
 * and before the service recorded its outcome (`deliver.sent` always; any other point when a
 * delivery happens to be in flight at that moment). The restarted service makes that attempt
 * again, with the same webhook-id / request_id and the same body, so receivers dedupe: delivery is
 * at least once, with at most one extra request per delivery per crash, and never a request for a
 * delivery already recorded as delivered. The test asserts exactly that and no other duplicate.
 */

const CREDITS = 100_000;
/** Per task: the task callback and one account endpoint (Standard Webhooks). */
const DELIVERIES_PER_TASK = 2;
/** Scenarios run side by side, each with its own database, receiver and processes. */
const PARALLEL = Number(process.env.MEDIAFORGE_CRASH_PARALLEL ?? 3);

const REQUESTS = [
  { key: 'crash-succeeds', prompt: 'a lighthouse at dusk', state: 'succeeded' },
  { key: 'crash-fails', prompt: `a storm at sea ${FAIL}`, state: 'failed' },
] as const;

/**
 * Both lives of the service run with these. Generation outlasts a lease, as it does in production
 * (minutes against 60 s): a task may still be running when the restarted worker takes the dead
 * one's items over. The lease is short so that happens quickly, yet well above any one handler's
 * time on a busy machine (a live item must not be taken twice).
 */
const SETTINGS = {
  secret: 'crash-secret',
  simulatorLatencyMs: 2000,
  leaseMs: 1500,
  workerIdleMs: 50,
  webhookTimeoutMs: 5000,
};

const counts = {
  faultPoints: 0,
  crashesInjected: 0,
  restarts: 0,
  tasks: 0,
  requestsAfterRestart: 0,
  deliveries: 0,
  receivedRequests: 0,
  unavoidableDuplicates: 0,
  violations: 0,
};

/** Scenario directories, whose PostgreSQL schemas are dropped after the last scenario. */
const usedDirs: string[] = [];

let running = 0;
const queue: (() => void)[] = [];
async function slot<T>(run: () => Promise<T>): Promise<T> {
  if (running >= PARALLEL) await new Promise<void>((resolve) => queue.push(resolve));
  running++;
  try {
    return await run();
  } finally {
    running--;
    queue.shift()?.();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Answer {
  status: number;
  replayed: boolean;
  taskId?: string;
}

/** createTask as a client would send it; undefined when the connection died without an answer. */
async function createTask(
  url: string,
  apiKey: string,
  request: (typeof REQUESTS)[number],
  callBackUrl: string,
): Promise<Answer | undefined> {
  try {
    const response = await fetch(`${url}/api/v1/jobs/createTask`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'content-type': 'application/json',
        'idempotency-key': request.key,
      },
      body: JSON.stringify({ model: MODEL, input: { prompt: request.prompt }, callBackUrl }),
    });
    const body = (await response.json()) as { data?: { taskId?: string } };
    return {
      status: response.status,
      replayed: response.headers.get('idempotent-replayed') === 'true',
      taskId: body.data?.taskId,
    };
  } catch {
    return undefined;
  }
}

/** The exit of a process that should kill itself: its signal, or 'alive' after `ms` (then it is killed). */
async function deathOf(server: ServerProcess, ms: number): Promise<string> {
  const outcome = await Promise.race([server.exited.then(() => 'exited'), sleep(ms).then(() => 'alive')]);
  if (outcome === 'alive') {
    server.child.kill('SIGKILL');
    await server.exited;
    return 'alive';
  }
  return server.child.signalCode ?? `exit code ${server.child.exitCode}`;
}

async function scenario(fault: FaultCase): Promise<string[]> {
  const problems: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'mediaforge-crash-'));
  const receiver = await startReceiver();
  let armed: ServerProcess | undefined;
  let restarted: TestService | undefined;
  let db: Db | undefined;
  try {
    const dbUrl = await testDbUrl(dir);
    db = await openDb(dbUrl);
    await migrateToLatest(db);
    const account = await createAccount(db, { credits: CREDITS, now: Date.now() });
    // Maintenance is not due during the scenario, so the first work a worker claims is a task's.
    await db.kysely
      .insertInto('work_items')
      .values(
        Object.keys(maintenanceWorkHandlers).map((kind) => ({
          kind,
          task_id: null,
          ref_id: null,
          due_at: Date.now() + 3600_000,
          lease_owner: null,
          lease_until: null,
          attempts: 0,
          done_at: null,
          created_at: Date.now(),
        })),
      )
      .execute();
    const endpoint = await addEndpoint(db, {
      accountId: account.accountId,
      url: receiver.url,
      events: 'task.completed',
      policy: { allowPrivate: true, allowInsecure: true },
      now: Date.now(),
    });
    const read = () => snapshot(db!, account.accountId);
    const ledgerProblems = (when: string) =>
      checkLedger({ ctx: { db: db! } } as never, account.accountId).then(
        () => [],
        (error: Error) => [`${when}: ${error.message}`],
      );

    // 1. The armed process: create both tasks until it dies, then wait for its death.
    armed = await spawnServer({
      MEDIAFORGE_DB: dbUrl,
      MEDIAFORGE_DATA_DIR: dir,
      MEDIAFORGE_BLOB_STORE: 'local',
      MEDIAFORGE_SECRET: SETTINGS.secret,
      MEDIAFORGE_SIMULATOR_LATENCY_MS: String(SETTINGS.simulatorLatencyMs),
      MEDIAFORGE_SIMULATOR_FAIL_WHEN_PROMPT_CONTAINS: FAIL,
      MEDIAFORGE_LEASE_MS: String(SETTINGS.leaseMs),
      MEDIAFORGE_WORKER_IDLE_MS: String(SETTINGS.workerIdleMs),
      MEDIAFORGE_WEBHOOK_TIMEOUT_MS: String(SETTINGS.webhookTimeoutMs),
      MEDIAFORGE_RATE_LIMIT_PER_MINUTE: '100000',
      MEDIAFORGE_WEBHOOK_ALLOW_PRIVATE: '1',
      MEDIAFORGE_WEBHOOK_ALLOW_INSECURE: '1',
      MEDIAFORGE_FAULT_POINTS: fault.point,
    });
    const answers = new Map<string, Answer>();
    for (const request of REQUESTS) {
      const answer = await createTask(armed.url, account.apiKey, request, receiver.url);
      if (!answer) break;
      answers.set(request.key, answer);
    }
    const death = await deathOf(armed, 30_000);
    if (death !== 'SIGKILL')
      return [`${fault.point}: the armed process ended with ${death}, not SIGKILL (never reached?)`];
    counts.crashesInjected++;

    // 2. The database as the crash left it; the receiver's requests so far came from the dead process.
    // A request the process wrote just before it died can reach the receiver after its exit event:
    // count them once the kernel has closed every one of its connections.
    const atCrash = await read();
    await receiver.quiet();
    const preCount = receiver.requests.length;
    problems.push(...(await ledgerProblems('at the crash')), ...checkTaskRows(atCrash));
    if (fault.phase === 'create') problems.push(...createCrashProblems(fault, atCrash, answers));

    // 3. Restart without faults; the client retries what got no answer, with the same key.
    restarted = await startTestService(
      { ...SETTINGS, ...LOOPBACK, simulatorFailWhenPromptContains: FAIL, blobStore: 'local' },
      { dir },
    );
    counts.restarts++;
    for (const request of REQUESTS) {
      const earlier = answers.get(request.key);
      if (earlier) {
        if (earlier.status !== 202) problems.push(`${request.key}: answered ${earlier.status} before the crash`);
        continue;
      }
      counts.requestsAfterRestart++;
      const answer = await createTask(restarted.url, account.apiKey, request, receiver.url);
      if (answer?.status !== 202) problems.push(`${request.key}: the retry got ${answer?.status ?? 'no answer'}`);
      const committed = atCrash.keys.find((k) => k.key === request.key);
      // A request committed before the crash is replayed, never created twice.
      if (committed && (answer?.taskId !== committed.task_id || !answer.replayed))
        problems.push(`${request.key}: the retry made ${answer?.taskId}, not a replay of ${committed.task_id}`);
      if (answer) answers.set(request.key, answer);
    }

    // 4. Wait until the service is quiet, then check everything.
    let final: Snapshot = await read();
    for (
      const until = Date.now() + 60_000;
      !isQuiet(final, REQUESTS.length, DELIVERIES_PER_TASK) && Date.now() < until;
    ) {
      await sleep(100);
      final = await read();
    }
    if (!isQuiet(final, REQUESTS.length, DELIVERIES_PER_TASK)) problems.push(`not quiet after 60 s: ${summary(final)}`);
    await restarted.close();
    restarted = undefined;
    final = await read(); // after the stop: nothing more may have moved
    problems.push(
      ...(await ledgerProblems('at the end')),
      ...checkTaskRows(final),
      ...(await finalProblems(final, answers, dir)),
    );
    const audit = auditDeliveries({
      requests: receiver.requests,
      preCount,
      atCrash: atCrash.deliveries,
      final: final.deliveries,
      callbackSecret: account.webhookSecret,
      endpointSecret: endpoint.secret,
    });
    problems.push(...audit.problems);
    // deliver.sent is hit after a 2xx: that attempt is re-made, so its duplicate must be there.
    if (fault.point.startsWith('deliver.sent') && audit.duplicates < 1)
      problems.push('no delivery was re-sent after a crash between its send and its record');
    counts.unavoidableDuplicates += audit.duplicates;
    counts.tasks += final.tasks.length;
    counts.deliveries += final.deliveries.length;
    counts.receivedRequests += receiver.requests.length;
    return problems.map((p) => `${fault.point}: ${p}`);
  } finally {
    if (armed && armed.child.exitCode === null && armed.child.signalCode === null) armed.child.kill('SIGKILL'); // a test that failed early
    await armed?.exited;
    await restarted?.close();
    await db?.close();
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
    usedDirs.push(dir);
  }
}

/** createTask phase: a crash inside its transaction leaves nothing; one after the commit leaves it all. */
function createCrashProblems(fault: FaultCase, atCrash: Snapshot, answers: Map<string, Answer>): string[] {
  const problems: string[] = [];
  if (answers.size !== 0)
    problems.push(`the first createTask was answered (${JSON.stringify([...answers])}) though the crash is inside it`);
  const rows = {
    tasks: atCrash.tasks.length,
    holds: atCrash.holds.length,
    keys: atCrash.keys.length,
    ledger: atCrash.ledger.filter((e) => e.kind !== 'grant').length,
    work: atCrash.work.length,
  };
  const untouched = atCrash.wallet.available === CREDITS && atCrash.wallet.held === 0;
  if (fault.rollsBack && (Object.values(rows).some((n) => n !== 0) || !untouched))
    problems.push(`rows left by a rolled-back createTask: ${JSON.stringify(rows)}`);
  if (!fault.rollsBack && (rows.tasks !== 1 || rows.holds !== 1 || rows.keys !== 1 || rows.work < 2))
    problems.push(`createTask committed but: ${JSON.stringify(rows)}`);
  return problems;
}

/** One task per key, in the state the simulator gives it, its media stored; two delivered announcements each. */
async function finalProblems(final: Snapshot, answers: Map<string, Answer>, dir: string): Promise<string[]> {
  const problems: string[] = [];
  if (final.tasks.length !== REQUESTS.length || final.keys.length !== REQUESTS.length)
    problems.push(`${final.tasks.length} tasks and ${final.keys.length} keys for ${REQUESTS.length} requests`);
  if (final.wallet.held !== 0 || final.wallet.purchased !== CREDITS)
    problems.push(`wallet at the end: ${JSON.stringify(final.wallet)}`);
  for (const request of REQUESTS) {
    const key = final.keys.find((k) => k.key === request.key);
    const task = final.tasks.find((t) => t.id === key?.task_id);
    if (!task) {
      problems.push(`${request.key}: no task`);
      continue;
    }
    if (answers.get(request.key)?.taskId !== task.id)
      problems.push(`${request.key}: answered ${answers.get(request.key)?.taskId}, the key names ${task.id}`);
    if (task.state !== request.state) problems.push(`${task.id}: ${task.state}, expected ${request.state}`);
    for (const output of JSON.parse(task.output_json ?? '[]') as { key: string }[]) {
      const size = statSync(join(dir, 'blobs', output.key), { throwIfNoEntry: false })?.size ?? 0;
      if (size === 0) problems.push(`${task.id}: output ${output.key} missing from the blob store`);
    }
    const kinds = final.deliveries
      .filter((d) => d.task_id === task.id)
      .map((d) => d.kind)
      .sort();
    if (kinds.join() !== 'callback,endpoint') problems.push(`${task.id}: deliveries ${kinds.join() || 'none'}`);
  }
  return problems;
}

/** What is still open, for the message of a service that never went quiet. */
function summary(s: Snapshot): string {
  return JSON.stringify({
    tasks: s.tasks.map((t) => `${t.id}:${t.state}`),
    deliveries: s.deliveries.map((d) => `${d.id}:${d.state}/${d.attempts}`),
    openWork: s.work
      .filter((w) => w.done_at === null && w.kind !== 'purge')
      .map((w) => `${w.kind}:${w.task_id}:lease ${w.lease_until}`),
  });
}

// Real processes on a shared machine: a generous limit per scenario (it may wait for a slot); no timing is asserted.
describe('crash at every phase: SIGKILL at each fault point, restart, nothing lost or doubled', () => {
  afterAll(async () => {
    recordCounts('crash', counts);
    // PostgreSQL schemas go at the end (a service reads only its own schema, so dropping one while
    // another scenario migrates is harmless: runtime/storage/pg-introspector.ts).
    for (const dir of usedDirs) await dropTestSchema(dir);
  });

  for (const fault of FAULT_CASES) {
    // Concurrent tests must use the context's expect.
    it.concurrent(fault.point, async ({ expect }) => {
      counts.faultPoints++;
      const problems = await slot(() => scenario(fault)).catch((error: Error) => [`${fault.point}: ${error.message}`]);
      counts.violations += problems.length;
      expect(problems).toEqual([]);
    }, 180_000);
  }
});
