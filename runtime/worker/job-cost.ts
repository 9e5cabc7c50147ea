import type { Context } from '../context.js';
import type { DeploymentJob } from '../deployments/deployment.js';
import { recordJobCostUnlessSucceeded, recordJobCostWhileOpen } from '../tasks/upstream-job-marks.js';
import { upstreamCostMicros } from './store-outputs.js';

/**
 * What the operator owes a provider for a job it reported completed, before its result is stored
 * and measured: the length the provider reported, else the length the task asked for (what a
 * provider bills a finished job by). Settlement replaces it with the measured figure on success.
 */
export function completedJobCost(
  cost: { perSecondMicros: number; perVideoMicros: number } | undefined,
  reportedSeconds: number | undefined,
  job: DeploymentJob,
): number | null {
  const asked = job.input.duration_seconds;
  return upstreamCostMicros(cost, reportedSeconds ?? (typeof asked === 'number' && asked > 0 ? asked : 0));
}

/**
 * Records the upstream cost of a completed job on its task, whatever became of the task (failed
 * after the job, a result that is not a video, expired meanwhile): the margin report counts every
 * job the operator pays for, not only the succeeded ones. `while-running`: as soon as the provider
 * said the job completed; `unless-succeeded`: the measured figure on a task that ended otherwise
 * meanwhile (a succeeded task's cost is written by its settlement). Nothing without a declared cost.
 */
export async function recordJobCost(
  ctx: Context,
  taskId: string,
  micros: number | null,
  when: 'while-running' | 'unless-succeeded',
): Promise<void> {
  if (micros === null) return;
  if (when === 'while-running') await recordJobCostWhileOpen(ctx.db.kysely, taskId, micros);
  else await recordJobCostUnlessSucceeded(ctx.db.kysely, taskId, micros);
}
