import type { Executor } from '../storage/executor.js';
import { OPEN_STATES } from './states.js';

/**
 * What the operator owes for an upstream job and how the job ended, recorded on its task whatever
 * became of the task (issue 27, issue 37): the margin report reads them (runtime/routing/margin.ts).
 * One statement each; the worker's reconciliation (runtime/worker/reconcile.ts, find-job.ts) and
 * its poll (task-work.ts) decide when.
 */

/** How a reconciled job ended (tasks.upstream_final_state); `unresolved`: it had not ended at the horizon. */
export type UpstreamFinalState = 'succeeded' | 'failed' | 'canceled' | 'lost' | 'unresolved';

/** A completed job's cost as soon as the provider said it completed, while its task is still open. */
export async function recordJobCostWhileOpen(db: Executor, taskId: string, micros: number): Promise<void> {
  await db
    .updateTable('tasks')
    .set({ upstream_cost_micros: micros })
    .where('id', '=', taskId)
    .where('state', 'in', [...OPEN_STATES])
    .execute();
}

/** The measured cost of a job whose task ended otherwise meanwhile (a succeeded task's is written by its settlement). */
export async function recordJobCostUnlessSucceeded(db: Executor, taskId: string, micros: number): Promise<void> {
  await db
    .updateTable('tasks')
    .set({ upstream_cost_micros: micros })
    .where('id', '=', taskId)
    .where('state', '!=', 'succeeded')
    .execute();
}

/** The reconciled job's end, once; a completed job's cost unless one was recorded already (the poll saw it complete). */
export async function recordUpstreamEnd(
  db: Executor,
  taskId: string,
  end: UpstreamFinalState,
  costMicros: number | null,
): Promise<void> {
  await db
    .updateTable('tasks')
    .set((eb) => ({
      upstream_final_state: end,
      ...(costMicros === null
        ? {}
        : { upstream_cost_micros: eb.fn.coalesce('upstream_cost_micros', eb.val(costMicros)) }),
    }))
    .where('id', '=', taskId)
    .where('upstream_final_state', 'is', null)
    .where('state', '!=', 'succeeded')
    .execute();
}

/** The search for the job of an unknown submit ended without one: `absent` (none made) or `unresolved` (not answered). */
export async function endJobSearch(db: Executor, taskId: string, end: 'absent' | 'unresolved'): Promise<void> {
  await db
    .updateTable('tasks')
    .set({ upstream_final_state: end })
    .where('id', '=', taskId)
    .where('deployment_handle', 'is', null)
    .where('upstream_final_state', 'is', null)
    .execute();
}

/** The handle of the job an unknown submit made, found later: kept unless a handle is known already (false). */
export async function keepFoundJobHandle(db: Executor, taskId: string, handle: string): Promise<boolean> {
  const kept = await db
    .updateTable('tasks')
    .set({ deployment_handle: handle })
    .where('id', '=', taskId)
    .where('deployment_handle', 'is', null)
    .executeTakeFirst();
  return Number(kept.numUpdatedRows) === 1;
}
