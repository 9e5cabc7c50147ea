import type { BetterSqliteDatabase, Db } from './dialect.js';

/**
 * One IMMEDIATE transaction run straight on better-sqlite3, for a hot write path (createTask): the
 * whole transaction is one synchronous function, so nothing else runs between its BEGIN and its
 * COMMIT and no query is built per request (Kysely's query building cost more than the statements,
 * bench/README.md). It runs while it holds Kysely's lock on the one connection, so no Kysely
 * transaction is open around it or interleaved with it. A throw rolls it back.
 */
export async function sqliteTransaction<T>(db: Db, work: (sqlite: BetterSqliteDatabase) => T): Promise<T> {
  const sqlite = db.sqlite;
  if (!sqlite) throw new Error('sqliteTransaction needs the SQLite engine');
  return db.kysely.connection().execute(async () => sqlite.transaction(work).immediate(sqlite));
}

/** `insert into "table" ("a", "b") values (?, ?), (?, ?)`: `rows` rows of `columns`. */
export function sqliteInsertText(table: string, columns: readonly string[], rows = 1): string {
  const row = `(${columns.map(() => '?').join(', ')})`;
  return `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values ${Array(rows).fill(row).join(', ')}`;
}
