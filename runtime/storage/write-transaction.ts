import type { Db } from './dialect.js';
import type { Trx } from './executor.js';

/**
 * A transaction that writes, written with Kysely: on SQLite it joins the next commit group
 * (sqlite-group-commit.ts: its own SAVEPOINT, one COMMIT for what the event-loop turn finished,
 * answered after it), elsewhere it is a transaction of its own. Its outcome is the same either way:
 * all of it or none of it, and the caller hears of it once it is durable.
 */
export function writeTransaction<T>(db: Db, work: (trx: Trx) => Promise<T>): Promise<T> {
  return db.sqliteGroup ? db.sqliteGroup.runTransaction(work) : db.kysely.transaction().execute(work);
}
