/**
 * A preload for a service process on PostgreSQL (diagnosis only, never in the figures): counts
 * every statement node-postgres sends, by its text, with the time until its answer (a round trip,
 * the server's work included), and writes the totals to MEDIAFORGE_SQLSTATS_FILE when the process
 * exits, in bench/sqlstats.ts's format (prepares 0). Spawn with:
 * node --import tsx --import ./bench/pgstats.ts bin/mediaforge.js serve
 */
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const pg = require('pg') as { Client: { prototype: { query: (...args: unknown[]) => unknown } } };

const stats = new Map<string, { calls: number; ms: number }>();
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
  const first = args[0] as string | { text?: string } | undefined;
  const text = typeof first === 'string' ? first : (first?.text ?? '(no text)');
  let s = stats.get(text);
  if (!s) stats.set(text, (s = { calls: 0, ms: 0 }));
  const stat = s;
  stat.calls++;
  const t0 = performance.now();
  const result = query.apply(this, args);
  if (result && typeof (result as Promise<unknown>).then === 'function')
    (result as Promise<unknown>).then(
      () => (stat.ms += performance.now() - t0),
      () => (stat.ms += performance.now() - t0),
    );
  return result;
};

const out = process.env.MEDIAFORGE_SQLSTATS_FILE;
if (out) {
  const dump = () => {
    const rows = [...stats.entries()]
      .map(([sql, s]) => ({ sql, ...s, prepares: 0, prepareMs: 0 }))
      .sort((a, b) => b.calls - a.calls);
    writeFileSync(out, JSON.stringify(rows, null, 1));
  };
  process.on('exit', dump);
  setInterval(dump, 2000).unref();
}
