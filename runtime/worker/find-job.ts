import { UpstreamError } from '../deployments/upstream-error.js';
import type { WorkHandler, WorkHandlers, WorkOutcome } from '../queue/work-handler.js';
import { writeTransaction } from '../storage/write-transaction.js';
import { taskById } from '../tasks/task-rows.js';
import { endJobSearch, keepFoundJobHandle } from '../tasks/upstream-job-marks.js';
import { scheduleReconcile } from './reconcile.js';
import { DEPLOYMENT_CALL_TIMEOUT_MS, jobOf, timeBoxed } from './task-job.js';

/**
 * Looks for the job a submit whose outcome is unknown may have made (./unknown-submit.ts), where
 * the deployment offers a way (Deployment.findJob: a list of the key's jobs). Found: its handle is
 * kept on the task and the job is reconciled as any job of an ended task (./reconcile.ts: its end
 * and cost recorded, the cost then abandoned in the margin report). Absent (asked no sooner than
 * the reconcile pace after the submit was given up, the provider's list holds none): recorded as
 * `absent`, no longer counted. Not answered: asked again at the reconcile pace until the horizon,
 * then `unresolved` (still counted as possibly abandoned).
 */
const findJob: WorkHandler = async (ctx, item): Promise<WorkOutcome> => {
  const task = await taskById(ctx.db, item.task_id!);
  const givenUpAt = task?.unknown_submit_at;
  if (!task || givenUpAt == null || task.deployment_handle || task.upstream_final_state !== null) return { done: true };
  const deployment = ctx.deployments.byName(task.deployment ?? '');
  if (!deployment?.findJob) return { done: true };
  const now = ctx.clock.now();
  const horizon = givenUpAt + ctx.config.upstreamReconcileMs;
  const end = (state: 'absent' | 'unresolved') => endJobSearch(ctx.db.kysely, task.id, state);
  let found: { handle: string } | 'absent';
  try {
    // The model's id at the upstream, as the submit sent it: what the provider's list echoes.
    const job = await jobOf(ctx, task);
    const upstreamModel = ctx.deployments.routeOf(job.model, deployment.name)?.upstreamModel;
    if (upstreamModel !== undefined) job.upstreamModel = upstreamModel;
    found = await timeBoxed(deployment.findJob(job, givenUpAt), DEPLOYMENT_CALL_TIMEOUT_MS, 'find');
  } catch (error) {
    const failure = error instanceof UpstreamError ? error : new UpstreamError('protocol', (error as Error).message);
    ctx.upstreamStats.failed(deployment.name, failure.failure);
    if (now >= horizon) {
      await end('unresolved');
      ctx.log.warn({ task: task.id, deployment: deployment.name }, 'the possible job was not found by the horizon');
      return { done: true };
    }
    ctx.log.warn(
      { task: task.id, deployment: deployment.name, err: failure },
      'looking for a possible job failed; asked again later',
    );
    return { retryAt: Math.min(horizon, now + ctx.config.upstreamReconcilePollMs), attempts: 0 };
  }
  if (found === 'absent') {
    await end('absent');
    ctx.log.info({ task: task.id, deployment: deployment.name }, 'the submit whose outcome was unknown made no job');
    return { done: true };
  }
  const handle = found.handle;
  await writeTransaction(ctx.db, async (trx) => {
    if (await keepFoundJobHandle(trx, task.id, handle)) await scheduleReconcile(trx, now, ctx, task.id);
  });
  ctx.log.warn(
    { task: task.id, deployment: deployment.name },
    'the job a submit whose outcome was unknown made is found: reconciled as abandoned',
  );
  return { done: true };
};

export const findJobWorkHandlers = { 'find-job': findJob } satisfies WorkHandlers;
