import { catalogue } from '../../generated/catalogue.js';
import type { Context } from '../context.js';
import { UpstreamError } from '../deployments/upstream-error.js';
import { recordCallAnswered, recordCallFailure } from '../routing/health.js';
import type { ResolutionHook } from '../tasks/resolve-task.js';
import type { TaskRow } from '../tasks/task-record.js';
import { taskById } from '../tasks/task-rows.js';
import { scheduleWork } from '../queue/schedule-work.js';
import type { WorkHandler, WorkHandlers } from '../queue/work-handler.js';

/** Attempts at cancelling one upstream job before it is left to the upstream's own limits (logged). */
const MAX_CANCEL_ATTEMPTS = 6;
const CANCEL_TIMEOUT_MS = 30_000;

/**
 * A task that ended while its upstream job may still run (expired at its deadline, canceled, or
 * failed by the service: a poll that kept failing) has that job cancelled where the protocol
 * allows, so nothing runs on for a task nobody will be charged for (and reconciled, whether or not
 * it can be cancelled: ./reconcile.ts). The work item is written by
 * a resolution hook, in the transaction that ends the task: a crash cannot lose it.
 */
export function jobMayStillRun(task: Pick<TaskRow, 'state' | 'error_code'>): boolean {
  return (
    task.state === 'expired' ||
    task.state === 'canceled' ||
    (task.state === 'failed' && task.error_code === 'internal_error')
  );
}

/** The resolution hook that writes the `upstream-cancel` work item (one of the service's default hooks: runtime/service.ts). */
export const upstreamCancelHook: ResolutionHook = async (trx, task, now, ctx) => {
  if (!task.deployment || !task.deployment_handle || !jobMayStillRun(task)) return;
  if (!ctx.deployments.byName(task.deployment)?.cancel) return;
  await scheduleWork(trx, now, { kind: 'upstream-cancel', taskId: task.id, dueAt: now });
};

const cancelUpstreamJob: WorkHandler = async (ctx: Context, item) => {
  const task = await taskById(ctx.db, item.task_id!);
  const deployment = task?.deployment ? ctx.deployments.byName(task.deployment) : undefined;
  const model = task ? catalogue.get(task.model)?.info : undefined;
  if (!task?.deployment_handle || !deployment?.cancel || !model) return { done: true };
  try {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      deployment.cancel(task.deployment_handle, { taskId: task.id, model, input: {} }),
      new Promise(
        (_, reject) =>
          (timer = setTimeout(
            () => reject(new Error(`cancel did not answer within ${CANCEL_TIMEOUT_MS} ms`)),
            CANCEL_TIMEOUT_MS,
          )),
      ),
    ]).finally(() => clearTimeout(timer));
    await recordCallAnswered(ctx, deployment);
    ctx.log.info({ task: task.id, deployment: deployment.name }, 'upstream job cancelled');
    return { done: true };
  } catch (error) {
    if (error instanceof UpstreamError && (error.failure === 'lost' || error.failure === 'rejected'))
      return { done: true }; // gone, or past cancelling: the upstream answered
    if (!(error instanceof UpstreamError && error.failure === 'busy'))
      await recordCallFailure(
        ctx,
        deployment.name,
        'cancel',
        error instanceof UpstreamError ? error : new UpstreamError('protocol', (error as Error).message),
        { task },
      );
    if (item.attempts >= MAX_CANCEL_ATTEMPTS) {
      ctx.log.warn(
        { err: error, task: task.id, deployment: deployment.name },
        'upstream job could not be cancelled; giving up',
      );
      return { done: true };
    }
    ctx.log.warn({ err: error, task: task.id, deployment: deployment.name }, 'upstream cancel failed; retrying');
    const retry = error instanceof UpstreamError ? error.details.retryAfterMs : undefined;
    return { retryAt: ctx.clock.now() + (retry ?? Math.min(60_000, 1000 * 2 ** item.attempts)) };
  }
};

export const upstreamCancelWorkHandlers = { 'upstream-cancel': cancelUpstreamJob } satisfies WorkHandlers;
