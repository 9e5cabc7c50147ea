import { pgScheduleWork, pgWorkRows, scheduleWorkSqlite } from '../queue/schedule-work-direct.js';
import type { Db } from '../storage/dialect.js';
import type { Executor } from '../storage/executor.js';

/**
 * queued -> running, the upstream's handle stored and the first poll item written, as one write:
 * how nearly every submit ends (runtime/worker/task-work.ts). Statements sent as they are, no
 * query built per task (the tail's Kysely work was a fifth of its CPU: bench/runs/2026-11-27.md):
 * - SQLite: two prepared statements in the commit group, the item only when the update took;
 * - PostgreSQL: one statement, the update and the insert as CTEs (one round trip, where a
 *   transaction of the two was four).
 * False, with nothing written, when the task is no longer queued (it ended while the submit was on
 * its way): the caller then keeps the handle in a transaction of its own.
 */
export async function markRunning(
  db: Db,
  task: { id: string; handle: string },
  now: number,
  firstPollAt: number,
): Promise<boolean> {
  const poll = [{ kind: 'poll' as const, taskId: task.id, dueAt: firstPollAt }];
  if (db.sqliteGroup)
    return db.sqliteGroup.run((sqlite) => {
      const started = sqlite.prepare(SQLITE_START).run(now, now, task.handle, task.id);
      if (started.changes !== 1) return false;
      scheduleWorkSqlite(sqlite, now, poll);
      return true;
    });
  const { rows } = await db.pg!.query<{ started: number }>({
    name: 'run-start',
    text: PG_START,
    values: [now, task.handle, task.id, pgWorkRows(now, poll)],
  });
  return rows[0].started === 1;
}

/**
 * The handle of a task that ended (expired, canceled, failed) while its submit was on its way:
 * kept so that the job can be found, reconciled and stopped. False when a handle was kept before
 * or the task did not end that way (the caller then schedules nothing).
 */
export async function keepHandleOfEndedTask(
  db: Executor,
  taskId: string,
  handle: string,
  now: number,
): Promise<boolean> {
  const kept = await db
    .updateTable('tasks')
    .set({ deployment_handle: handle, updated_at: now })
    .where('id', '=', taskId)
    .where('deployment_handle', 'is', null)
    .where('state', 'in', ['expired', 'canceled', 'failed'])
    .executeTakeFirst();
  return Number(kept.numUpdatedRows) === 1;
}

const SQLITE_START = `UPDATE tasks SET state = 'running', started_at = ?, updated_at = ?, deployment_handle = ?
  WHERE id = ? AND state = 'queued'`;

const PG_START = `WITH started AS (
  UPDATE tasks SET state = 'running', started_at = $1, updated_at = $1, deployment_handle = $2
  WHERE id = $3 AND state = 'queued' RETURNING id
),
work AS (
  ${pgScheduleWork('$4', 'EXISTS (SELECT 1 FROM started)')}
)
SELECT count(*)::int AS started FROM started`;
