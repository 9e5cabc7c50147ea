import { CompiledQuery } from 'kysely';
import { postgresPlaceholders } from './postgres-placeholders.js';
import type { Db, Engine } from './dialect.js';
import type { Trx } from './executor.js';

/**
 * A fixed write of the task pipeline's tail (a poll's progress, a resolution's task row), run with
 * no query built per task: the tail's Kysely work was a fifth of its CPU (bench/runs/2026-11-27.md).
 * The text is written once in SQLite's spelling (`?` placeholders, no `?` elsewhere) and numbered
 * for PostgreSQL (postgres-placeholders.ts); the SQL stays with the repository function that owns it.
 * - `run`, a statement alone: on SQLite a better-sqlite3 statement (cached by text on the
 *   connection: dialect.ts) in the next commit group (sqlite-group-commit.ts), answered once
 *   durable; on PostgreSQL a named prepared statement through the pool, its own transaction.
 * - `runIn`, inside a transaction the caller holds (Kysely's): the text given to the transaction
 *   as it is (no building or compiling; SQLite's statement is still the connection's cached one).
 * Both answer the number of rows changed. `name` is unique among the writes (PostgreSQL keeps a
 * connection's prepared statements by name).
 */
export interface PreparedWrite<P extends unknown[]> {
  run(db: Db, ...params: P): Promise<number>;
  runIn(trx: Trx, engine: Engine, ...params: P): Promise<number>;
}

export function preparedWrite<P extends unknown[]>(name: string, sqliteText: string): PreparedWrite<P> {
  const pgText = postgresPlaceholders(sqliteText);
  const pgName = `prepared-write:${name}`;
  return {
    async run(db, ...params) {
      if (db.sqliteGroup) return db.sqliteGroup.run((sqlite) => sqlite.prepare(sqliteText).run(...params).changes);
      return (await db.pg!.query({ name: pgName, text: pgText, values: params as unknown[] })).rowCount ?? 0;
    },
    async runIn(trx, engine, ...params) {
      const result = await trx.executeQuery(CompiledQuery.raw(engine === 'postgres' ? pgText : sqliteText, params));
      return Number(result.numAffectedRows ?? 0);
    },
  };
}
