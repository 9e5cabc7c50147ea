import { checkTaskReferences } from '../assets/run-check.js';
import type { Context } from '../context.js';
import { failTask } from '../tasks/resolve-task.js';
import { keepReferenceClipSeconds } from '../tasks/submit-marks.js';
import { isTerminal } from '../tasks/states.js';
import type { TaskRow } from '../tasks/task-record.js';
import { handOver } from '../queue/hand-over.js';
import type { WorkHandler, WorkHandlers, WorkItem } from '../queue/work-handler.js';
import { REFERENCES_CHECKED } from '../queue/work-kinds.js';
import { taskById } from '../tasks/task-rows.js';

/**
 * A task whose check fetches external files: its run item hands the task to the check lane (a
 * host that never answers holds a check slot until the fetch timeout, never a task slot) and ends.
 * The check item's handler writes the run item back when the references pass.
 */
export async function sendToCheck(ctx: Context, item: WorkItem): Promise<void> {
  await handOver(ctx, item, { kind: 'check' });
}

/** Whether a run item comes from a passed check (the check is not made again). */
export function checkedBefore(item: WorkItem): boolean {
  return item.ref_id === REFERENCES_CHECKED;
}

/**
 * The check lane's handler: the reference check of a queued task. A problem fails the task once
 * (hold released); a pass keeps the billed clips' lengths on the task, then ends this item and
 * writes the task's run item in one transaction. A crash anywhere before that commit leaves this
 * item to be taken again (the fetch is repeated, the lengths written again).
 */
const checkTask: WorkHandler = async (ctx, item) => {
  const task: TaskRow | undefined = await taskById(ctx.db, item.task_id!);
  if (!task || isTerminal(task.state)) return { done: true };
  const checked = await checkTaskReferences(ctx, task);
  if (checked.problem) {
    await failTask(ctx, task.id, checked.problem.code, checked.problem.detail);
    return { done: true };
  }
  await keepReferenceClipSeconds(ctx.db.kysely, task.id, checked.clipSeconds);
  await handOver(ctx, item, { kind: 'run', refId: REFERENCES_CHECKED });
  return { done: true };
};

export const checkWorkHandlers = { check: checkTask } satisfies WorkHandlers;
