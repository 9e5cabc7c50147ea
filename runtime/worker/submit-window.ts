import type { Context } from '../context.js';
import { failTask } from '../tasks/resolve-task.js';
import type { TaskRow } from '../tasks/task-record.js';

/**
 * The submit window (MEDIAFORGE_UPSTREAM_SUBMIT_WINDOW_SECONDS): a task whose submits keep failing
 * (every deployment refused it, could not be reached, or was cooling down) is given up that long
 * after its first submit attempt, instead of holding its credits until the task deadline. The
 * deadline stays for tasks that started; a task pinned to a deployment after an unknown outcome
 * (its job may exist) is not failed by the window.
 */

/** When the window of a task whose first attempt was at `firstAttemptAt` closes. */
export function submitWindowEnd(ctx: Context, firstAttemptAt: number): number {
  return firstAttemptAt + ctx.config.upstreamSubmitWindowMs;
}

/**
 * Fails the task when its window has closed: `no_provider` (the caller's words: nothing was
 * charged, try later; no upstream named), hold released. True when the window is closed.
 */
export async function closeWhenWindowPassed(ctx: Context, task: TaskRow): Promise<boolean> {
  if (task.first_submit_at === null) return false;
  const now = ctx.clock.now();
  if (now < submitWindowEnd(ctx, task.first_submit_at)) return false;
  ctx.log.warn(
    { task: task.id, model: task.model, windowMs: ctx.config.upstreamSubmitWindowMs },
    'no deployment started the task within the submit window; the task fails, hold released',
  );
  await failTask(ctx, task.id, 'no_provider', null);
  return true;
}
