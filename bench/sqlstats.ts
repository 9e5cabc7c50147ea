/**
 * A preload for a service process (diagnosis only, never in the figures): times every SQLite
 * statement by its SQL text, and prepare() calls, and writes the totals to MEDIAFORGE_SQLSTATS_FILE
 * when the process exits. Spawn with: node --import tsx --import ./bench/sqlstats.ts bin/mediaforge.js serve
 */
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3') as { prototype: { prepare(sql: string): Record<string, unknown> } };

interface Stat {
  calls: number;
  ms: number;
  prepares: number;
  prepareMs: number;
}
const stats = new Map<string, Stat>();
const stat = (sql: string) => {
  let s = stats.get(sql);
  if (!s) stats.set(sql, (s = { calls: 0, ms: 0, prepares: 0, prepareMs: 0 }));
  return s;
};

const prepare = Database.prototype.prepare;
Database.prototype.prepare = function (this: unknown, sql: string) {
  const t0 = performance.now();
  const statement = prepare.call(this, sql);
  const s = stat(sql);
  s.prepares++;
  s.prepareMs += performance.now() - t0;
  for (const method of ['run', 'all', 'get']) {
    const original = statement[method] as (...args: unknown[]) => unknown;
    if (typeof original !== 'function') continue;
    statement[method] = function (this: unknown, ...args: unknown[]) {
      const t1 = performance.now();
      try {
        return original.apply(this, args);
      } finally {
        s.calls++;
        s.ms += performance.now() - t1;
      }
    };
  }
  return statement;
};

const out = process.env.MEDIAFORGE_SQLSTATS_FILE;
if (out) {
  const dump = () => {
    const rows = [...stats.entries()]
      .map(([sql, s]) => ({ sql, ...s }))
      .sort((a, b) => b.ms + b.prepareMs - (a.ms + a.prepareMs));
    writeFileSync(out, JSON.stringify(rows, null, 1));
  };
  process.on('exit', dump);
  setInterval(dump, 2000).unref();
}
