import { CompiledQuery } from 'kysely';
import { postgresPlaceholders } from './postgres-placeholders.js';
import type { Db } from './dialect.js';

/**
 * A fixed read on a request path (the task of recordInfo, the wallet of quote), run as a prepared
 * statement on each engine with no query built per request: Kysely's query building, compiling and
 * connection lock were a fifth of recordInfo's CPU (bench/runs/2026-11-26.md, h/hotreads). The SQL
 * stays with the repository function that owns it; this module only runs it. `name` is unique
 * among the reads (PostgreSQL keeps a connection's prepared statements by name).
 *
 * The text is written once in SQLite's spelling (`?` placeholders, no `?` elsewhere) and numbered
 * (`$1`, `$2`…) for PostgreSQL. The rows are those Kysely gives for the same SQL: the same drivers
 * with the same type parsers (PostgreSQL's int8 as a number: dialect.ts), so `select *` keeps the
 * row types of schema.ts.
 * - SQLite: a better-sqlite3 statement prepared once per connection (the connection keeps its
 *   statements by text: dialect.ts, cacheStatements; nothing is kept here), run synchronously. While a
 *   transaction is open on the one connection (a Kysely transaction or a commit group's Kysely work,
 *   which hold it across awaits: sqlite-group-commit.ts), a synchronous read would see that
 *   transaction's uncommitted rows; the read then waits for Kysely's lock on the connection like any
 *   Kysely query, and runs after that transaction has ended.
 * - PostgreSQL: a node-postgres named prepared statement (parsed and planned once per connection),
 *   sent through the pool, outside any transaction.
 */
export interface PreparedRead<P extends unknown[], R> {
  /** The first row, or undefined. */
  first(db: Db, ...params: P): Promise<R | undefined>;
}

export function preparedRead<P extends unknown[], R>(name: string, sqliteText: string): PreparedRead<P, R> {
  const pgText = postgresPlaceholders(sqliteText);
  const pgName = `prepared-read:${name}`;
  return {
    async first(db, ...params) {
      const { sqlite } = db;
      if (sqlite) {
        if (!sqlite.inTransaction) return sqlite.prepare<P, R>(sqliteText).get(...params);
        return (await db.kysely.executeQuery<R>(CompiledQuery.raw(sqliteText, params))).rows[0];
      }
      return (await db.pg!.query<R & object>({ name: pgName, text: pgText, values: params })).rows[0];
    },
  };
}
