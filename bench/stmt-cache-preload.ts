/**
 * Diagnosis only (never in the figures): the prepared-statement cache proposed for
 * runtime/storage/dialect.ts, applied from outside by a preload so that its effect can be measured
 * side by side before anyone changes the runtime. Kysely's SQLite driver calls db.prepare(sql) for
 * every query; this memoizes the statement per database and SQL text.
 *   node --import tsx --import ./bench/stmt-cache-preload.ts bin/mediaforge.js serve ...
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
type Statement = unknown;
const Database = require('better-sqlite3') as { prototype: { prepare(sql: string): Statement } };

const caches = new WeakMap<object, Map<string, Statement>>();
const prepare = Database.prototype.prepare;
Database.prototype.prepare = function (this: object, sql: string) {
  let cache = caches.get(this);
  if (!cache) caches.set(this, (cache = new Map()));
  let statement = cache.get(sql);
  if (statement === undefined) {
    statement = prepare.call(this, sql);
    if (cache.size >= 1000) cache.clear();
    cache.set(sql, statement);
  }
  return statement;
};
