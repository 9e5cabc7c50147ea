import type { Context } from '../context.js';
import type { DeploymentStatus } from '../deployments/deployment.js';
import { UpstreamError } from '../deployments/upstream-error.js';
import { recordCallAnswered, recordCallFailure } from '../routing/health.js';
import type { ResolutionHook } from '../tasks/resolve-task.js';
import { isTerminal } from '../tasks/states.js';
import type { TaskRow } from '../tasks/task-record.js';
import { taskById } from '../tasks/task-rows.js';
import { recordUpstreamEnd, type UpstreamFinalState } from '../tasks/upstream-job-marks.js';
import type { Executor } from '../storage/executor.js';
import { completedJobCost } from './job-cost.js';
import { scheduleWork } from '../queue/schedule-work.js';
import { DEPLOYMENT_CALL_TIMEOUT_MS, jobOf, releaseResult, timeBoxed } from './task-job.js';
import { jobMayStillRun } from './upstream-cancel.js';
import type { WorkHandler, WorkHandlers, WorkOutcome } from '../queue/work-handler.js';

/**
 * Reconciliation (issue 27): a task that ended while its upstream job may still run (expired,
 * canceled, a poll that gave up) no longer waits for the job, but the operator may still pay for
 * it. The job is polled slowly (Config.upstreamReconcilePollMs) until it ends or the horizon
 * (Config.upstreamReconcileMs after the task ended) passes; its end and, when it completed, its
 * cost are recorded on the task, whose outcome for the client does not change (its hold is already
 * released). Those costs are the margin report's "abandoned cost" (runtime/routing/margin.ts).
 * Nothing is downloaded: the job's result links are never read.
 */
export async function scheduleReconcile(db: Executor, now: number, ctx: Context, taskId: string): Promise<void> {
  await scheduleWork(db, now, { kind: 'reconcile', taskId, dueAt: now + ctx.config.upstreamReconcilePollMs });
}

/** The resolution hook that writes the `reconcile` work item, in the transaction that ends the task (runtime/service.ts). */
export const reconcileHook: ResolutionHook = async (trx, task, now, ctx) => {
  if (!task.deployment || !task.deployment_handle || !jobMayStillRun(task)) return;
  await scheduleReconcile(trx, now, ctx, task.id);
};

/** Records the job's end once; a completed job's cost unless one was recorded already (the poll saw it complete). */
async function recordEnd(ctx: Context, task: TaskRow, end: UpstreamFinalState, costMicros: number | null = null) {
  await recordUpstreamEnd(ctx.db.kysely, task.id, end, costMicros);
  const log = { task: task.id, deployment: task.deployment, end, costMicros };
  if (end === 'unresolved') ctx.log.warn(log, 'the upstream job had not ended at the reconciliation horizon');
  else ctx.log.info(log, 'the upstream job of an ended task is reconciled');
}

const reconcileJob: WorkHandler = async (ctx, item, signal): Promise<WorkOutcome> => {
  const task = await taskById(ctx.db, item.task_id!);
  if (!task?.deployment_handle || !isTerminal(task.state) || task.upstream_final_state !== null) return { done: true };
  const deployment = ctx.deployments.byName(task.deployment ?? '');
  if (!deployment) {
    ctx.log.warn({ task: task.id, deployment: task.deployment }, 'not reconciled: the deployment is gone');
    return { done: true };
  }
  const now = ctx.clock.now();
  const horizon = (task.finished_at ?? now) + ctx.config.upstreamReconcileMs;
  if (now >= horizon) {
    await recordEnd(ctx, task, 'unresolved');
    return { done: true };
  }
  const next = { retryAt: Math.min(horizon, now + ctx.config.upstreamReconcilePollMs), attempts: 0 };
  // An aborted signal: any result stream the adapter hands back ends before its first byte.
  // The status request itself ends with the item (shutdown, lease lost): the worker leaves the item to run again.
  const job = {
    ...(await jobOf(ctx, task)),
    signal: AbortSignal.abort(new Error('reconciliation downloads nothing')),
    ...(signal ? { requestSignal: signal } : {}),
  };
  const asked = performance.now();
  let status: DeploymentStatus;
  try {
    status = await timeBoxed(deployment.poll(task.deployment_handle, job), DEPLOYMENT_CALL_TIMEOUT_MS, 'poll');
  } catch (error) {
    if (signal?.aborted) throw error;
    const failure = error instanceof UpstreamError ? error : new UpstreamError('protocol', (error as Error).message);
    ctx.upstreamStats.failed(deployment.name, failure.failure);
    if (failure.failure === 'lost') {
      await recordEnd(ctx, task, 'lost');
      return { done: true };
    }
    // Only what says the upstream itself is unwell counts (these polls download nothing: a cut stream is not its fault).
    if (['unreachable', 'server', 'unauthorized'].includes(failure.failure))
      await recordCallFailure(ctx, deployment.name, 'poll', failure, { task });
    ctx.log.warn(
      { task: task.id, deployment: deployment.name, err: failure },
      'reconciliation poll failed; asked again later',
    );
    return next;
  }
  ctx.upstreamStats.polled(deployment.name, performance.now() - asked);
  await recordCallAnswered(ctx, deployment);
  if (status.state === 'running') return next;
  ctx.faults.reach('reconcile.answered'); // the job's end is known, nothing recorded: the item runs again
  if (status.state !== 'succeeded') {
    await recordEnd(ctx, task, status.state);
    return { done: true };
  }
  const route = ctx.deployments.routeOf(job.model, deployment.name);
  await recordEnd(ctx, task, 'succeeded', completedJobCost(route?.cost, status.outputSeconds, job));
  // Never fetched: the upstream may let go of the result now, as after a stored one.
  await releaseResult(
    ctx,
    deployment,
    { id: task.id, deployment_handle: task.deployment_handle },
    job,
    DEPLOYMENT_CALL_TIMEOUT_MS,
  );
  return { done: true };
};

export const reconcileWorkHandlers = { reconcile: reconcileJob } satisfies WorkHandlers;
