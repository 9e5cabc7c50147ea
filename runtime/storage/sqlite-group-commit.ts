import type { Kysely } from 'kysely';
import type { BetterSqliteDatabase } from './dialect.js';
import type { Trx } from './executor.js';
import type { Database } from './schema.js';

/** Enough to share a commit among a burst of requests, small enough to keep one group's pause of the event loop short. */
const MAX_GROUP = 64;

/** Synchronous work on the connection (prepared statements), or a Kysely transaction's work (`runTransaction`). */
type Work = { sync: (sqlite: BetterSqliteDatabase) => unknown } | { trx: (trx: Trx) => Promise<unknown> };

interface Pending {
  work: Work;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Group commit for SQLite: the transactions asked for in one turn of the event loop run in one
 * IMMEDIATE transaction and one COMMIT. A commit costs more than createTask's seven statements
 * together (it writes every page they touched to the WAL; bench/README.md), and concurrent
 * requests touch many of the same pages (the wallet, the tails of the append-ordered indexes).
 *
 * Each request's work runs inside its own SAVEPOINT: a throw rolls back that request's work only,
 * and the others' still commit. Every caller is answered after the COMMIT, so none is told of a
 * write that is not durable; if the COMMIT itself fails, every request of the group fails with it
 * (none of them was written). The work is synchronous (no await between BEGIN and COMMIT) and runs
 * while Kysely's lock on the one connection is held, so no Kysely transaction interleaves with it.
 * One per database (Db.sqliteGroup).
 */
export class SqliteGroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;

  constructor(
    private readonly kysely: Kysely<Database>,
    private readonly sqlite: BetterSqliteDatabase,
  ) {}

  /** Runs `work` in the next group; resolves with its value once the group's COMMIT is done. */
  run<T>(work: (sqlite: BetterSqliteDatabase) => T): Promise<T> {
    return this.enqueue({ sync: work });
  }

  /**
   * Runs a transaction written with Kysely (`work` gets the group's transaction) in the next group,
   * in its own SAVEPOINT like the synchronous work; resolves with its value once the group's COMMIT
   * is done. `work` must only use `trx` (the group holds the one connection until its COMMIT): the
   * worker's transactions, whose statements go through Kysely, share commits this way.
   */
  runTransaction<T>(work: (trx: Trx) => Promise<T>): Promise<T> {
    return this.enqueue({ trx: work });
  }

  private enqueue<T>(work: Work): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // After the I/O phase: the requests read in the same turn join the group.
    setImmediate(() => {
      this.kysely
        .connection()
        .execute(async (connection) => this.flush(connection))
        .catch((error: unknown) => {
          // Acquiring the connection failed (the database is closing): every waiting request fails.
          for (const pending of this.queue.splice(0)) pending.reject(error);
        });
    });
  }

  private async flush(connection: Kysely<Database>): Promise<void> {
    this.scheduled = false;
    const batch = this.queue.splice(0, MAX_GROUP);
    if (this.queue.length) this.schedule();
    if (batch.length === 0) return;
    const sqlite = this.sqlite;
    try {
      if (batch.some((pending) => 'trx' in pending.work)) await this.commitTransactions(connection, sqlite, batch);
      else this.commit(sqlite, batch);
    } catch (error) {
      // Not a request's own failure (those are caught around each one): end the transaction, fail them all.
      if (sqlite.inTransaction) statement(sqlite, 'ROLLBACK').run();
      for (const pending of batch) pending.reject(error);
    }
  }

  /**
   * A group with Kysely transactions among its work: one Kysely transaction on the held connection
   * (BEGIN IMMEDIATE, COMMIT, ROLLBACK when anything but a work's own failure happens), each work in
   * its own SAVEPOINT, one after the other; everyone answered after the COMMIT.
   */
  private async commitTransactions(
    connection: Kysely<Database>,
    sqlite: BetterSqliteDatabase,
    batch: Pending[],
  ): Promise<void> {
    const outcomes: Outcome[] = [];
    await connection.transaction().execute(async (trx) => {
      for (const pending of batch) {
        statement(sqlite, 'SAVEPOINT request').run();
        try {
          const { work } = pending;
          outcomes.push({ ok: true, value: 'sync' in work ? work.sync(sqlite) : await work.trx(trx) });
          statement(sqlite, 'RELEASE request').run();
        } catch (error) {
          outcomes.push({ ok: false, error });
          // SQLite ended the whole transaction (an I/O error, a full disk): the group's work is gone.
          if (!undoWork(sqlite)) throw error;
        }
      }
    });
    answer(batch, outcomes, undefined);
  }

  private commit(sqlite: BetterSqliteDatabase, batch: Pending[]): void {
    const outcomes: Outcome[] = [];
    try {
      statement(sqlite, 'BEGIN IMMEDIATE').run();
    } catch (error) {
      for (const pending of batch) pending.reject(error);
      return;
    }
    let lost: unknown;
    for (const pending of batch) {
      if (lost !== undefined) {
        outcomes.push({ ok: false, error: lost });
        continue;
      }
      statement(sqlite, 'SAVEPOINT request').run();
      try {
        if (!('sync' in pending.work)) throw new Error('a Kysely transaction in a synchronous group');
        outcomes.push({ ok: true, value: pending.work.sync(sqlite) });
        statement(sqlite, 'RELEASE request').run();
      } catch (error) {
        outcomes.push({ ok: false, error });
        // SQLite ended the whole transaction (an I/O error, a full disk): the group's work is gone.
        if (!undoWork(sqlite)) lost = error;
      }
    }
    let failure = lost;
    if (failure === undefined) {
      try {
        statement(sqlite, 'COMMIT').run();
      } catch (error) {
        failure = error;
        if (sqlite.inTransaction) statement(sqlite, 'ROLLBACK').run();
      }
    } else if (sqlite.inTransaction) statement(sqlite, 'ROLLBACK').run();
    answer(batch, outcomes, failure);
  }
}

/**
 * After a work's own failure: its SAVEPOINT rolled back, the group's other work kept. False when
 * SQLite had already ended the whole transaction, so there is nothing to roll back to.
 */
function undoWork(sqlite: BetterSqliteDatabase): boolean {
  if (!sqlite.inTransaction) return false;
  statement(sqlite, 'ROLLBACK TO request').run();
  statement(sqlite, 'RELEASE request').run();
  return true;
}

/** Each work answered with its own outcome, or with the group's failure (`failure`: the COMMIT or the transaction lost) when its own went well. */
function answer(batch: Pending[], outcomes: Outcome[], failure: unknown): void {
  batch.forEach((pending, i) => {
    const outcome = outcomes[i];
    if (!outcome.ok) pending.reject(outcome.error);
    else if (failure !== undefined) pending.reject(failure);
    else pending.resolve(outcome.value);
  });
}

function statement(sqlite: BetterSqliteDatabase, text: string) {
  return sqlite.prepare(text);
}
