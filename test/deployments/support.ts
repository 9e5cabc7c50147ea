import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect } from 'vitest';
import { createAccount, type CreatedAccount } from '../../runtime/accounts/accounts.js';
import type { Config } from '../../runtime/config.js';
import { type DeploymentsPlan, parseDeployments } from '../../runtime/routing/deployments-file.js';
import { JobsProtocolServer, type JobsServerOptions } from '../../support/upstreams/jobs-protocol-server.js';
import { openDb, type Db } from '../../runtime/storage/dialect.js';
import { spawnServer, type ServerProcess } from '../reliability/support.js';
import { MODEL_D, PRICE_D } from '../http/helpers.js';
import {
  migratedTestDbUrl,
  releaseTestSchema,
  startTestService,
  testStoreEnvironment,
  type TestService,
} from '../support/service.js';

/**
 * A real `mediaforge serve` process (test/reliability/support.ts spawnServer) on its own database
 * and data folder, with a handle on that database for accounts and checks. Restartable on the
 * same database (SIGKILL, then `restart`).
 */
export interface MediaforgeProcess {
  dir: string;
  dbUrl: string;
  db: Db;
  server: ServerProcess;
  url: string;
  env: NodeJS.ProcessEnv;
  account(credits: number): Promise<CreatedAccount>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const BASE_ENV = {
  MEDIAFORGE_SECRET: 'chained-test-secret',
  // Everything these services reach is on loopback: their upstreams, the upstreams' results, and the
  // customer's references they fetch whole (issue 37 point 3, the run's reference host).
  MEDIAFORGE_WEBHOOK_ALLOW_PRIVATE: '1',
  MEDIAFORGE_WEBHOOK_ALLOW_INSECURE: '1',
  MEDIAFORGE_RATE_LIMIT_PER_MINUTE: '1000000',
  // As startTestService's (test/support/service.ts): an idle pass every 50 ms cost more CPU than the suites' work.
  MEDIAFORGE_WORKER_IDLE_MS: '250',
};

export async function startMediaforge(
  name: string,
  env: NodeJS.ProcessEnv,
  files: Record<string, string> = {},
  /** Another checkout to run (test/support/spec-copy.ts copyCheckout); this one by default. */
  cwd?: string,
): Promise<MediaforgeProcess> {
  const dir = mkdtempSync(join(tmpdir(), `mediaforge-${name}-`));
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  const dbUrl = await migratedTestDbUrl(dir);
  const fullEnv = { ...BASE_ENV, ...testStoreEnvironment(), MEDIAFORGE_DB: dbUrl, MEDIAFORGE_DATA_DIR: dir, ...env };
  const resolved = Object.fromEntries(
    Object.entries(fullEnv).map(([k, v]) => [k, typeof v === 'string' ? v.replaceAll('$DIR', dir) : v]),
  );
  let server = await spawnServer(resolved, [], cwd);
  const db = await openDb(dbUrl);
  const proc: MediaforgeProcess = {
    dir,
    dbUrl,
    db,
    server,
    url: server.url,
    env: resolved,
    account: (credits) => createAccount(db, { credits, now: Date.now() }),
    async restart() {
      server = await spawnServer(resolved, [], cwd);
      proc.server = server;
      proc.url = server.url;
    },
    async stop() {
      if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGTERM');
      await server.exited;
      await db.close();
      rmSync(dir, { recursive: true, force: true });
      await releaseTestSchema(dir);
    },
  };
  return proc;
}

/** Kills the process as a crash would (no shutdown), and waits until it is gone. */
export async function crash(proc: MediaforgeProcess): Promise<void> {
  proc.server.child.kill('SIGKILL');
  await proc.server.exited;
}

export async function call(
  base: string,
  method: string,
  path: string,
  key: string,
  body?: unknown,
): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

/** What an account's wallet holds and has spent, read from the process's own database. */
export const walletOf = (proc: MediaforgeProcess, accountId: string) =>
  proc.db.kysely
    .selectFrom('wallets')
    .select(['held', 'spent'])
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();

/** Polls recordInfo until the task is terminal (or `until` says so). */
export async function waitForTask(
  base: string,
  key: string,
  taskId: string,
  until: (record: any) => boolean = (r) => ['succeeded', 'failed', 'expired', 'canceled'].includes(r.state),
  timeoutMs = 20_000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await call(base, 'GET', `/api/v1/jobs/recordInfo?taskId=${encodeURIComponent(taskId)}`, key).catch(
      () => undefined,
    );
    if (r?.status === 200 && until(r.body.data)) return r.body.data;
    if (Date.now() > deadline)
      throw new Error(`task ${taskId} not there after ${timeoutMs} ms: ${JSON.stringify(r?.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** What acceptance writes for an account: the wallet, and its holds, tasks and Idempotency-Key rows (a refusal changes none of them). */
export async function acceptanceWrites(t: TestService, accountId: string) {
  const db = t.service.ctx.db.kysely;
  const count = async (table: 'holds' | 'tasks' | 'idempotency_keys') =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('account_id', '=', accountId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    wallet: await t.wallet(accountId),
    holds: await count('holds'),
    tasks: await count('tasks'),
    idempotencyRows: await count('idempotency_keys'),
  };
}

/** Anything a test starts and must stop: a test service, a loopback upstream, a clip server. */
export interface Closable {
  close(): Promise<void>;
}

/** What the running test opened: set `service` and push `servers` as they start. */
export interface OpenedByTest {
  service: TestService | undefined;
  servers: Closable[];
}

/**
 * Registers an afterEach that closes what each test opened, and returns where the test puts it.
 * The service closes first: while it runs, its workers still poll, cancel and download from the
 * loopback servers, and a server gone from under them would turn those last calls into failures in
 * a test that has already passed. Then the servers, one after another, so each close finishes.
 */
export function closedAfterEach(): OpenedByTest {
  const opened: OpenedByTest = { service: undefined, servers: [] };
  afterEach(async () => {
    await opened.service?.close();
    opened.service = undefined;
    for (const server of opened.servers.splice(0)) await server.close();
  });
  return opened;
}

/** How a suite's service meets its upstreams: its poll interval and, where a test needs one, a task deadline. */
export interface PlanTiming {
  deadlineMs?: number;
  pollMs?: number;
}

/**
 * The service settings for that timing: polls every 50 ms unless told (the loopback upstreams answer
 * at once, so the default pause would only slow the suites), the default deadline unless one is given.
 */
export function timingConfig(timing: PlanTiming): Partial<Config> {
  return { upstreamPollMs: timing.pollMs ?? 50, ...(timing.deadlineMs ? { taskDeadlineMs: timing.deadlineMs } : {}) };
}

/**
 * A test service routing by `plan` with that timing (and any other `config`), put in `opened` to
 * close after the test, and one account holding `credits` (1,000 unless told).
 */
export async function serviceOnPlan(
  opened: OpenedByTest,
  plan: DeploymentsPlan,
  timing: PlanTiming,
  config: Partial<Config> = {},
  credits = 1000,
) {
  const t = await startTestService({ ...timingConfig(timing), ...config }, { deploymentsPlan: plan });
  opened.service = t;
  const account = await t.account(credits);
  return { t, ...account };
}

/** One task of MODEL_D through deployment `first` (the server under test) with a healthy `second` below it. */
export interface FailoverCase<Given> {
  given: Given;
  want: {
    state: 'succeeded' | 'failed';
    errorCode?: string;
    errorMessage?: string;
    firstSubmits: number;
    secondSubmits: number;
  };
}

/** How such a task ended: its state and error, the submits each deployment took, and PRICE_D spent only on success. */
export async function expectFailoverEnd(
  t: TestService,
  accountId: string,
  task: { state: string; errorCode?: string; errorMessage?: string },
  submits: [first: number, second: number],
  want: FailoverCase<unknown>['want'],
): Promise<void> {
  expect(task.state).toBe(want.state);
  if (want.errorCode) expect(task.errorCode).toBe(want.errorCode);
  if (want.errorMessage) expect(task.errorMessage).toBe(want.errorMessage);
  expect(submits).toEqual([want.firstSubmits, want.secondSubmits]);
  expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: want.state === 'succeeded' ? PRICE_D : 0 });
}

/**
 * The costed jobs upstream of the result suites: a loopback jobs-protocol server (100 ms a job unless
 * `options` say otherwise) that wants the key `up-key`, put in `opened`, and a plan routing `model`
 * to it alone as `up`, sending that key and costing its jobs at 0.02 USD a second (what the margin
 * and reconciliation checks count on).
 */
export async function costedJobsUpstream(opened: OpenedByTest, options: JobsServerOptions, model = MODEL_D) {
  const upstream = await new JobsProtocolServer({ latencyMs: 100, apiKey: 'up-key', ...options }).start();
  opened.servers.push(upstream);
  const plan = parseDeployments(
    'deployments.yaml',
    [
      'upstreams:',
      `  up: { kind: jobs, baseUrl: "${upstream.baseUrl}", secretEnv: UP_KEY, cost: { perSecond: "0.02" } }`,
      'models:',
      `  ${model}:`,
      '    - upstream: up',
    ].join('\n'),
    { UP_KEY: 'up-key' },
  );
  return { upstream, plan };
}

/** Where a task went: the deployment that holds it and its handle there. */
export function deploymentOf(t: TestService, taskId: string) {
  return t.service.ctx.db.kysely
    .selectFrom('tasks')
    .select(['deployment', 'deployment_handle'])
    .where('id', '=', taskId)
    .executeTakeFirstOrThrow();
}
