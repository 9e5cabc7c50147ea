import type { Context } from '../context.js';
import type { Deployment } from '../deployments/deployment.js';
import { scheduleWork } from '../queue/schedule-work.js';
import { writeTransaction } from '../storage/write-transaction.js';
import type { TaskRow } from '../tasks/task-record.js';
import { markUnknownSubmit } from '../tasks/submit-marks.js';
import { completedJobCost } from './job-cost.js';
import { jobOf } from './task-job.js';

/**
 * A submit whose outcome is unknown on a protocol without an idempotency key (issue 37): the task
 * fails (its caller's doing), but the operator may pay for a job nobody sees. Recorded on the task
 * before it fails: when the submit was given up (the deployment and the request are the task's)
 * and the declared cost of the job as requested. The margin report counts it as possibly
 * abandoned (runtime/routing/margin.ts) until the job is found and reconciled, or found absent.
 * Where the deployment can find a job without its handle (Deployment.findJob), a `find-job` item
 * looks for it after the reconcile pace (./find-job.ts), in the same transaction: a crash loses none.
 */
export async function recordUnknownSubmit(ctx: Context, task: TaskRow, deployment: Deployment): Promise<void> {
  const now = ctx.clock.now();
  const job = await jobOf(ctx, task);
  const cost = completedJobCost(ctx.deployments.routeOf(job.model, deployment.name)?.cost, undefined, job);
  const recorded = await writeTransaction(ctx.db, async (trx) => {
    if (!(await markUnknownSubmit(trx, task.id, now, cost))) return false;
    if (deployment.findJob)
      await scheduleWork(trx, now, {
        kind: 'find-job',
        taskId: task.id,
        dueAt: now + ctx.config.upstreamReconcilePollMs,
      });
    return true;
  });
  if (recorded)
    ctx.log.warn(
      { task: task.id, deployment: deployment.name, costMicros: cost, findable: !!deployment.findJob },
      'submit outcome unknown and the protocol has no idempotency key: the task fails; the job it may have made is recorded as possibly abandoned',
    );
}
