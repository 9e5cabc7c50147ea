import type { Executor, Trx } from '../storage/executor.js';
import type { WorkKind } from './work-kinds.js';

/**
 * What the rooms above the queue ask of a task's work items, so that the work_items table is read
 * and written here only (scheduling, claims and leases are in schedule-work.ts, claim.ts).
 */

/** Ends the task's unfinished items of these kinds (a resolved task's run, poll and expire; a purged task's purge). */
export async function endTaskWork(trx: Trx, taskId: string, kinds: readonly WorkKind[], now: number): Promise<void> {
  await trx
    .updateTable('work_items')
    .set({ done_at: now })
    .where('task_id', '=', taskId)
    .where('kind', 'in', [...kinds])
    .where('done_at', 'is', null)
    .execute();
}

/**
 * Makes the task's waiting poll due now (the upstream callback): only an unleased poll due later
 * moves, so a poll that runs now or is due already is left alone. Whether one moved.
 */
export async function wakeTaskPoll(trx: Trx, taskId: string, now: number): Promise<boolean> {
  const woken = await trx
    .updateTable('work_items')
    .set({ due_at: now })
    .where('task_id', '=', taskId)
    .where('kind', '=', 'poll')
    .where('done_at', 'is', null)
    .where('lease_owner', 'is', null)
    .where('due_at', '>', now)
    .executeTakeFirst();
  return Number(woken.numUpdatedRows) > 0;
}

/** When each of these tasks' content is purged (its pending purge item's due time), by task id; tasks without one are absent. */
export async function purgeDueTimes(db: Executor, taskIds: readonly string[]): Promise<Map<string, number>> {
  const due = new Map<string, number>();
  if (taskIds.length === 0) return due;
  const items = await db
    .selectFrom('work_items')
    .select(['task_id', 'due_at'])
    .where('kind', '=', 'purge')
    .where('done_at', 'is', null)
    .where('task_id', 'in', [...taskIds])
    .execute();
  for (const item of items)
    if (item.task_id) due.set(item.task_id, Math.min(item.due_at, due.get(item.task_id) ?? Number.POSITIVE_INFINITY));
  return due;
}

/** Whether an unfinished item of this kind exists (a recurring job's one pending item). */
export async function hasPendingWork(db: Executor, kind: WorkKind): Promise<boolean> {
  const pending = await db
    .selectFrom('work_items')
    .select('id')
    .where('kind', '=', kind)
    .where('done_at', 'is', null)
    .executeTakeFirst();
  return pending !== undefined;
}

/** The due time of the oldest unfinished item due by `now` (undefined: none): /metrics' queue lag. */
export async function oldestDueAt(db: Executor, now: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('work_items')
    .select((eb) => eb.fn.min<number>('due_at').as('oldest'))
    .where('done_at', 'is', null)
    .where('due_at', '<=', now)
    .executeTakeFirst();
  return row?.oldest ? Number(row.oldest) : undefined;
}
