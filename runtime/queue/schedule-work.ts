import type { Executor } from '../storage/executor.js';
import type { NewWork, WorkFields } from './work-kinds.js';

export type { NewWork, WorkKind, WorkOf } from './work-kinds.js';

/** The columns of a new work item, in the order `newWorkRow` gives their values (the direct inserts bind them so). */
export const WORK_COLUMNS = [
  'kind',
  'task_id',
  'ref_id',
  'due_at',
  'lease_owner',
  'lease_until',
  'attempts',
  'done_at',
  'created_at',
] as const;

/** A new item is unleased, unattempted and not done. */
export function newWorkRow(now: number, w: NewWork) {
  const fields: WorkFields & { dueAt: number } = w;
  return {
    kind: w.kind,
    task_id: fields.taskId ?? null,
    ref_id: fields.refId ?? null,
    due_at: w.dueAt,
    lease_owner: null,
    lease_until: null,
    attempts: 0,
    done_at: null,
    created_at: now,
  };
}

/**
 * The one insert of work items (createTask's direct statements bind the same row, `newWorkRow`:
 * schedule-work-direct.ts).
 * Several items go in one statement. Callers write it in the transaction whose outcome it continues.
 */
export async function scheduleWork(db: Executor, now: number, ...items: NewWork[]): Promise<void> {
  if (items.length === 0) return;
  await db
    .insertInto('work_items')
    .values(items.map((w) => newWorkRow(now, w)))
    .execute();
}
