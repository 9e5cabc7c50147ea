import { sql, type Kysely } from 'kysely';
import type { Db } from '../../runtime/storage/dialect.js';
import type { Database } from '../../runtime/storage/schema.js';

/**
 * Runs several reads as of one moment, for checks that compare tables (a wallet with its holds, a
 * task with its hold). Separate reads are not enough while a worker resolves tasks: a resolution
 * can commit between two of them (PostgreSQL also completes a COMMIT a killed process had sent).
 * PostgreSQL: a REPEATABLE READ transaction. SQLite: a deferred BEGIN on one connection, a WAL
 * snapshot without the write lock (the service's transactions begin IMMEDIATE; holding the lock
 * here would stall a service running in the same process, whose busy wait blocks the event loop).
 */
export async function readConsistently<T>(db: Db, read: (k: Kysely<Database>) => Promise<T>): Promise<T> {
  if (db.engine === 'postgres') return db.kysely.transaction().setIsolationLevel('repeatable read').execute(read);
  return db.kysely.connection().execute(async (k) => {
    await sql`BEGIN`.execute(k);
    try {
      return await read(k);
    } finally {
      await sql`COMMIT`.execute(k);
    }
  });
}
