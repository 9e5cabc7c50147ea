import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { BetterSqliteDatabase } from './dialect.js';

/**
 * WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside the COMMIT that
 * takes the WAL past 1,000 pages, on the committing connection: with better-sqlite3 that is the
 * service's one thread, which then copies the pages into the database file and syncs it before it
 * answers anyone. It was half of the commit time of the task's tail (bench/runs/2026-11-27.md).
 *
 * Once a service has written that much (its WAL file reached START_AT_WAL_BYTES, checked every
 * WATCH_EVERY_MS), a worker thread with a connection of its own checkpoints PASSIVE every
 * CHECKPOINT_EVERY_MS: it copies what no reader still needs and never waits for a reader or the
 * writer. The service's connection keeps an automatic checkpoint at FALLBACK_PAGES, a bound on the
 * WAL should the thread fall behind or stop. A service that writes little (a console command, most
 * test services) never starts the thread.
 */
const START_AT_WAL_BYTES = 4 * 1024 * 1024;
const WATCH_EVERY_MS = 1000;
const CHECKPOINT_EVERY_MS = 100;
const FALLBACK_PAGES = 10_000;
/** SQLite's own default, put back when the thread is gone. */
const DEFAULT_PAGES = 1000;

const BETTER_SQLITE3 = createRequire(import.meta.url).resolve('better-sqlite3');
const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(${JSON.stringify(BETTER_SQLITE3)});
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('synchronous = NORMAL');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const timer = setInterval(() => {
  // SQLITE_BUSY: another connection is checkpointing; the next turn tries again.
  try { checkpoint.get(); } catch {}
}, workerData.everyMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
});`;

export interface SqliteCheckpoints {
  /** Stops the watch and the thread (the service's close, before its connection closes). */
  stop(): Promise<void>;
}

export function checkpointOffThread(
  sqlite: BetterSqliteDatabase,
  warn: (error: Error) => void,
): SqliteCheckpoints | undefined {
  if (sqlite.memory) return undefined;
  const wal = `${sqlite.name}-wal`;
  let thread: Worker | undefined;
  const start = () => {
    const started = new Worker(SOURCE, { eval: true, workerData: { path: sqlite.name, everyMs: CHECKPOINT_EVERY_MS } });
    started.unref(); // never keeps the process alive
    started.on('error', warn);
    started.on('exit', () => {
      if (thread !== started) return;
      thread = undefined;
      // Without the thread, the service's connection checkpoints at SQLite's usual size again.
      if (sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${DEFAULT_PAGES}`);
    });
    thread = started;
    sqlite.pragma(`wal_autocheckpoint = ${FALLBACK_PAGES}`);
  };
  const watch = setInterval(() => {
    const size = statOrZero(wal);
    if (size < START_AT_WAL_BYTES) return;
    clearInterval(watch);
    start();
  }, WATCH_EVERY_MS);
  watch.unref();
  return {
    async stop() {
      clearInterval(watch);
      const running = thread;
      if (!running) return;
      const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
      running.postMessage('stop');
      await exited;
    },
  };
}

function statOrZero(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
