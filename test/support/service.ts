import { readConsistently } from './consistent-read.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { createAccount, createKey } from '../../runtime/accounts/accounts.js';
import { configFromEnv, type Config } from '../../runtime/config.js';
import { createService, type Service, type ServiceOptions } from '../../runtime/service.js';
import { dropSchema, newSchemaUrl, releaseSchema, reusedSchemaUrl } from './postgres-schemas.js';
import { s3ServerAt } from './s3-server.js';

export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface TestService {
  service: Service;
  url: string;
  config: Config;
  /** A new account with `credits` purchased, its first (personal) key and webhook secret. */
  account(credits: number, language?: string): Promise<{ accountId: string; apiKey: string; webhookSecret: string }>;
  siblingKey(accountId: string, workspace?: string): Promise<string>;
  /** A real HTTP request to the running server; JSON bodies are sent and parsed; `form` is sent as multipart/form-data. */
  call<T = any>(
    method: string,
    path: string,
    options?: { key?: string; body?: unknown; rawBody?: string; form?: FormData; headers?: Record<string, string> },
  ): Promise<HttpResult<T>>;
  wallet(accountId: string): Promise<{ available: number; held: number; spent: number; purchased: number }>;
  /** Throws unless the account's wallet and ledger agree (see checkLedger). */
  checkLedger(accountId: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * The database of this run: SQLite by default; PostgreSQL when vitest's `postgres` project sets
 * MEDIAFORGE_TEST_DB=postgres (it exists when MEDIAFORGE_TEST_PG names a server).
 */
export const TEST_DB: 'sqlite' | 'postgres' = process.env.MEDIAFORGE_TEST_DB === 'postgres' ? 'postgres' : 'sqlite';

/**
 * The media store of this run: the configuration's default (local) unless vitest's `s3` projects
 * started an S3 server (test/support/s3-global-setup.ts): services then keep their media there, each
 * under its own prefix, unless a test names its store.
 */
function testStoreOverrides(): Partial<Config> {
  const endpoint = inject('s3Endpoint');
  return endpoint ? s3ServerAt(endpoint).serviceOverrides() : {};
}

/**
 * The same for a `mediaforge serve` child process (test/deployments/support.ts startMediaforge):
 * its environment's S3 settings in the `s3` projects, nothing otherwise (a test's own
 * MEDIAFORGE_BLOB_STORE wins).
 */
export function testStoreEnvironment(): Record<string, string> {
  const endpoint = inject('s3Endpoint');
  return endpoint ? s3ServerAt(endpoint).environment() : {};
}

/** A database URL for a service whose files live in `dir`: a file there, or a new PostgreSQL schema named after it. */
export async function testDbUrl(dir: string): Promise<string> {
  if (TEST_DB === 'sqlite') return `sqlite:${join(dir, 'db.sqlite')}`;
  return newSchemaUrl(testPgServer(), dir);
}

/**
 * The same for a service that migrates at start (startTestService, startMediaforge): on PostgreSQL,
 * a schema another service of this run migrated and left, emptied, where one is free
 * (test/support/postgres-schemas.ts). releaseTestSchema gives it back.
 */
export async function migratedTestDbUrl(dir: string): Promise<string> {
  if (TEST_DB === 'sqlite') return `sqlite:${join(dir, 'db.sqlite')}`;
  return reusedSchemaUrl(testPgServer(), dir);
}

function testPgServer(): string {
  const server = process.env.MEDIAFORGE_TEST_PG;
  if (!server) throw new Error('MEDIAFORGE_TEST_DB=postgres needs MEDIAFORGE_TEST_PG (postgres://...)');
  return server;
}

/** A URL of the PostgreSQL `server` whose search path is a fresh schema named after `dir` (dropTestSchema drops it). */
export async function postgresSchemaUrl(server: string, dir: string): Promise<string> {
  return newSchemaUrl(server, dir);
}

/** Drops the PostgreSQL schema of a service whose files lived in `dir` (nothing on SQLite). */
export async function dropTestSchema(dir: string): Promise<void> {
  if (TEST_DB === 'postgres') await dropSchema(testPgServer(), dir);
}

/** After the service of a migratedTestDbUrl stopped: its schema kept for another (nothing on SQLite). */
export async function releaseTestSchema(dir: string): Promise<void> {
  if (TEST_DB === 'postgres') await releaseSchema(testPgServer(), dir);
}

/** Drops the schema postgresSchemaUrl made for `dir`. */
export async function dropPostgresSchema(server: string, dir: string): Promise<void> {
  await dropSchema(server, dir);
}

export interface TestServiceOptions extends ServiceOptions {
  /** Start the background worker (default true); tests that drive `service.worker.runOnce()` themselves say false. */
  startWorker?: boolean;
  /** Reuse this directory (database file and data) instead of a fresh one; it is then kept on close (restart tests). */
  dir?: string;
}

/** Starts the real service on a free port with a throwaway SQLite file and a fast simulator. */
export async function startTestService(
  overrides: Partial<Config> = {},
  options: TestServiceOptions = {},
): Promise<TestService> {
  const { startWorker = true, dir: givenDir, ...serviceOptions } = options;
  const dir = givenDir ?? mkdtempSync(join(tmpdir(), 'mediaforge-test-'));
  const config = configFromEnv(
    {},
    {
      host: '127.0.0.1',
      port: 0,
      dbUrl: await migratedTestDbUrl(dir),
      dataDir: dir,
      secret: 'test-secret',
      simulatorLatencyMs: 150,
      // A new task wakes the worker at once; the idle pass finds only what nothing announced (an item
      // coming due is waited for exactly). At 50 ms an idle service on PostgreSQL ran 146 transactions
      // a second (11 % of a core, and PostgreSQL's share beside it); at 250, 35 (3 %). Four files of
      // the postgres project: 131-138 s and 250-265 s of CPU at 50, 110 s and 207 s at 250.
      workerIdleMs: 250,
      rateLimitPerMinute: 1_000_000,
      // Suites sign many users up and in from 127.0.0.1; the limits' own tests lower these.
      signInPerAddressPerMinute: 1_000_000,
      signUpsPerAddressPerDay: 1_000_000,
      signInFailuresBeforeLockout: 1_000_000,
      // A recorded run (.ci/run) records this service's store operations as it does a spawned one's.
      statementRecordDir: process.env.MEDIAFORGE_STATEMENT_RECORD || undefined,
      ...testStoreOverrides(),
      // A service with upstreams reaches loopback only: the upstreams' results and the customer's
      // references it fetches whole (issue 37 point 3, the run's reference host). Overrides still win.
      ...(serviceOptions.deploymentsPlan ? { webhookAllowPrivate: true, webhookAllowInsecure: true } : {}),
      ...overrides,
    },
  );
  const service = await createService(config, { migrate: true, ...serviceOptions });
  let url = '';
  if (service.app) {
    url = await service.app.listen({ port: 0, host: '127.0.0.1' });
    config.publicUrl = url;
  }
  if (startWorker) service.worker?.start();
  const db = service.ctx.db;
  const wallet = (accountId: string) =>
    db.kysely
      .selectFrom('wallets')
      .select(['available', 'held', 'spent', 'purchased'])
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
  return {
    service,
    url,
    config,
    account: (credits, language) => createAccount(db, { credits, language, now: Date.now() }),
    siblingKey: async (accountId, workspace = 'personal') =>
      (await createKey(db, accountId, workspace, Date.now())).apiKey,
    async call(method, path, options = {}) {
      const headers: Record<string, string> = { ...(options.headers ?? {}) };
      if (options.key) headers.authorization = `Bearer ${options.key}`;
      let body: string | FormData | undefined = options.form ?? options.rawBody;
      if (options.body !== undefined) {
        body = JSON.stringify(options.body);
        headers['content-type'] ??= 'application/json';
      }
      const response = await fetch(`${url}${path}`, { method, headers, body, redirect: 'manual' });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        /* not JSON: keep the text */
      }
      return { status: response.status, headers: response.headers, body: parsed as any };
    },
    wallet,
    async checkLedger(accountId) {
      await checkLedger(service, accountId);
    },
    async close() {
      await service.close();
      if (!givenDir) {
        rmSync(dir, { recursive: true, force: true });
        await releaseTestSchema(dir);
      }
    },
  };
}

/**
 * The ledger invariants (docs/architecture.md "The ledger's kinds and invariants"): available, held,
 * owed >= 0; purchased - reversed = available + held + spent; every wallet column equals what its
 * rows say (purchases and grants, reversals, debts, open holds, settled charges); no hold resolved twice.
 */
export async function checkLedger(service: Service, accountId: string): Promise<void> {
  const { w, entries, holds } = await readConsistently(service.ctx.db, async (db) => ({
    w: await db.selectFrom('wallets').selectAll().where('account_id', '=', accountId).executeTakeFirstOrThrow(),
    entries: await db.selectFrom('ledger_entries').selectAll().where('account_id', '=', accountId).execute(),
    holds: await db.selectFrom('holds').selectAll().where('account_id', '=', accountId).execute(),
  }));
  const sum = (...kinds: string[]) =>
    entries.filter((e) => kinds.includes(e.kind)).reduce((a, e) => a + Number(e.amount), 0);
  const problems: string[] = [];
  if (w.available < 0 || w.held < 0 || w.owed < 0) problems.push(`negative balance ${JSON.stringify(w)}`);
  if (w.purchased - w.reversed !== w.available + w.held + w.spent)
    problems.push(
      `purchased ${w.purchased} - reversed ${w.reversed} != available ${w.available} + held ${w.held} + spent ${w.spent}`,
    );
  if (sum('purchase', 'grant') !== w.purchased)
    problems.push(`purchase and grant rows ${sum('purchase', 'grant')} != purchased ${w.purchased}`);
  const reversed = sum('refund', 'dispute', 'debt_paid') - sum('dispute_won');
  if (reversed !== w.reversed) problems.push(`reversal rows ${reversed} != reversed ${w.reversed}`);
  const owed = sum('debt') - sum('debt_paid', 'debt_forgiven');
  if (owed !== w.owed) problems.push(`debt rows ${owed} != owed ${w.owed}`);
  const openHeld = holds.filter((h) => h.state === 'held').reduce((a, h) => a + h.amount, 0);
  if (openHeld !== w.held) problems.push(`open holds ${openHeld} != held ${w.held}`);
  if (sum('settle') !== w.spent) problems.push(`settle rows ${sum('settle')} != spent ${w.spent}`);
  for (const hold of holds) {
    const resolutions = entries.filter(
      (e) => e.task_id === hold.task_id && (e.kind === 'settle' || e.kind === 'release'),
    ).length;
    if (resolutions > 1) problems.push(`hold of ${hold.task_id} resolved ${resolutions} times`);
    if (hold.state === 'settled' && (hold.charged ?? 0) > hold.amount)
      problems.push(`hold of ${hold.task_id} settled above its amount`);
  }
  if (problems.length) throw new Error(`ledger of ${accountId} is inconsistent:\n${problems.join('\n')}`);
}

/** Polls recordInfo until the task is terminal (tests only; the service itself never polls per request). */
export async function waitForTerminal(t: TestService, key: string, taskId: string, timeoutMs = 10_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await t.call('GET', `/api/v1/jobs/recordInfo?taskId=${encodeURIComponent(taskId)}`, { key });
    if (['succeeded', 'failed', 'expired', 'canceled'].includes(r.body?.data?.state)) return r.body.data;
    if (Date.now() > until)
      throw new Error(`task ${taskId} not terminal after ${timeoutMs} ms: ${JSON.stringify(r.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A task's work item of one kind (`run`, `poll`…), as the service's database holds it now; undefined before it exists. */
export function workItemOf(t: TestService, taskId: string, kind: string) {
  return t.service.ctx.db.kysely
    .selectFrom('work_items')
    .selectAll()
    .where('task_id', '=', taskId)
    .where('kind', '=', kind)
    .executeTakeFirst();
}
