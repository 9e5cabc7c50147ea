import type { BetterSqliteDatabase } from '../storage/dialect.js';
import { sqliteInsertText } from '../storage/sqlite-insert-text.js';
import { newWorkRow, WORK_COLUMNS } from './schedule-work.js';
import type { NewWork } from './work-kinds.js';

/**
 * scheduleWork's insert as createTask writes it, on each engine's direct path (no query building:
 * tasks/accept-sqlite.ts, tasks/accept-postgres.ts), with the same rows (`newWorkRow`).
 */

/** The insert texts of up to 4 items (createTask writes 2), built once: index n holds the text of n items. */
const SQLITE_INSERTS: readonly string[] = Array.from({ length: 5 }, (_, n) =>
  sqliteInsertText('work_items', WORK_COLUMNS, Math.max(1, n)),
);

/**
 * The same insert on createTask's synchronous SQLite path (one prepared statement, no query
 * building: tasks/accept-sqlite.ts), inside the caller's transaction.
 */
export function scheduleWorkSqlite(sqlite: BetterSqliteDatabase, now: number, items: readonly NewWork[]): void {
  if (items.length === 0) return;
  const text = SQLITE_INSERTS[items.length] ?? sqliteInsertText('work_items', WORK_COLUMNS, items.length);
  sqlite.prepare(text).run(
    items.flatMap((w) => {
      const row = newWorkRow(now, w);
      return WORK_COLUMNS.map((c) => row[c]);
    }),
  );
}

/**
 * The same insert as a data-modifying CTE body of createTask's one PostgreSQL statement
 * (tasks/accept-postgres.ts): the rows come in as a JSON array in `param` (`pgWorkRows`), read by
 * json_populate_recordset so the columns and their types are the table's own; `condition` is the
 * WHERE that decides whether they go in at all.
 */
export function pgScheduleWork(param: string, condition: string): string {
  const columns = WORK_COLUMNS.join(', ');
  const values = WORK_COLUMNS.map((c) => `r.${c}`).join(', ');
  return `INSERT INTO work_items (${columns})
  SELECT ${values}
  FROM json_populate_recordset(NULL::work_items, ${param}::json) r WHERE ${condition}`;
}

/** The JSON bound to `pgScheduleWork`'s parameter. */
export function pgWorkRows(now: number, items: readonly NewWork[]): string {
  return JSON.stringify(items.map((w) => newWorkRow(now, w)));
}
