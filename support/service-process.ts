/**
 * Service processes spawned the way an operator starts them (`node bin/mediaforge.js serve
 * --migrate`, output to a file), with accounts written straight into their database before the
 * load: the benchmarks and the long load suite (test/reliability/load.long.test.ts) both run them.
 * Every process spawned here is registered and killed when this process exits, whatever happens.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAccount, type CreatedAccount } from '../runtime/accounts/accounts.js';
import { openDb, type Db } from '../runtime/storage/dialect.js';
import { migrateToLatest } from '../runtime/storage/migrate.js';

/** The checkout's root. */
const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The secret of every service started here (a ceiling server beside one signs with it too). */
export const SERVICE_SECRET = 'bench-secret';

/** Enough for any load (each task holds a few hundred credits). */
export const PLENTY_OF_CREDITS = 1_000_000_000_000;

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
  const url = `http://127.0.0.1:${options.port}`;
  return spawnLogged(args, { ...options, url }, async () => {
    const response = await fetch(`${url}${options.readyPath}`, { signal: AbortSignal.timeout(2000) });
    await response.arrayBuffer();
    return response.status === 200;
  });
}

/** The same for a process that serves no HTTP (`serve --role worker`): ready once its log holds `readyLine`. */
export async function spawnLoggedProcess(
  args: string[],
  options: { env: NodeJS.ProcessEnv; logPath: string; readyLine: string; cwd?: string; label: string },
): Promise<Spawned> {
  return spawnLogged(args, { ...options, url: '' }, async () =>
    readFileSync(options.logPath, 'utf8').includes(options.readyLine),
  );
}

async function spawnLogged(
  args: string[],
  options: { env: NodeJS.ProcessEnv; logPath: string; cwd?: string; label: string; url: string },
  ready: () => Promise<boolean>,
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
    if (await ready().catch(() => false)) break;
    if (Date.now() > until) {
      await stop(1000);
      throw new Error(`${options.label} did not answer within 90 s: ${tail(options.logPath)}`);
    }
    await sleep(100);
  }
  return { child, pid: child.pid!, url: options.url, logPath: options.logPath, stop };
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
  /** `worker`: no HTTP (its `url` is empty), ready once its log says it runs. */
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
    MEDIAFORGE_SECRET: SERVICE_SECRET,
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
  const logPath = join(dir, `service-${port}.log`);
  const label = options.label ?? 'mediaforge serve';
  let spawned: Spawned;
  try {
    // A worker serves no HTTP: it is up once it says so (runtime/cli/commands/serve.ts).
    spawned =
      options.role === 'worker'
        ? await spawnLoggedProcess(args, { env, logPath, readyLine: 'mediaforge worker running', label })
        : await spawnHttpProcess(args, { env, port, logPath, readyPath: '/healthz', label });
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
