import { sql } from 'kysely';
import type { Executor } from '../storage/executor.js';

/**
 * The writes of a queued task on its way to a deployment, before its run start (./run-start.ts):
 * the clip lengths its check measured, its first submit attempt, the deployment slot it takes and
 * gives back, and a submit whose outcome stayed unknown. One statement each; the callers in
 * worker/ and routing/ decide when, and keep any transaction around them.
 */

/**
 * The reference clip lengths the check measured (runtime/assets/run-check.ts), kept while the task
 * is queued: settlement bills them (runtime/assets/clip-lengths.ts `settledClipSeconds`).
 */
export async function keepReferenceClipSeconds(
  db: Executor,
  taskId: string,
  seconds: readonly number[] | undefined,
): Promise<void> {
  if (!seconds) return;
  await db
    .updateTable('tasks')
    .set({ reference_clip_seconds_json: JSON.stringify(seconds) })
    .where('id', '=', taskId)
    .where('state', '=', 'queued')
    .execute();
}

/** The first submit attempt, when every deployment was cooling down: the submit window counts from it. */
export async function markFirstSubmitAttempt(db: Executor, taskId: string, now: number): Promise<void> {
  await db
    .updateTable('tasks')
    .set({ first_submit_at: now })
    .where('id', '=', taskId)
    .where('first_submit_at', 'is', null)
    .execute();
}

/**
 * The task pinned to deployment `name` while it is queued and unpinned: a slot taken. The first
 * slot taken is the task's first submit attempt too. False when the task was not waiting any more.
 */
export async function pinToDeployment(db: Executor, taskId: string, name: string, now: number): Promise<boolean> {
  const taken = await db
    .updateTable('tasks')
    .set({ deployment: name, updated_at: now, first_submit_at: sql`coalesce(first_submit_at, ${now})` })
    .where('id', '=', taskId)
    .where('state', '=', 'queued')
    .where('deployment', 'is', null)
    .executeTakeFirst();
  return Number(taken.numUpdatedRows) === 1;
}

/** The slot given back after a submit that created nothing: the queued task may go to another deployment. */
export async function unpinFromDeployment(db: Executor, taskId: string, name: string, now: number): Promise<void> {
  await db
    .updateTable('tasks')
    .set({ deployment: null, updated_at: now })
    .where('id', '=', taskId)
    .where('deployment', '=', name)
    .where('deployment_handle', 'is', null)
    .where('state', '=', 'queued')
    .execute();
}

/**
 * A submit given up with its outcome unknown (runtime/worker/unknown-submit.ts): when, and the
 * declared cost of the job it may have made. Once, and only while no handle is known: false otherwise.
 */
export async function markUnknownSubmit(
  db: Executor,
  taskId: string,
  now: number,
  costMicros: number | null,
): Promise<boolean> {
  const marked = await db
    .updateTable('tasks')
    .set({ unknown_submit_at: now, unknown_submit_cost_micros: costMicros })
    .where('id', '=', taskId)
    .where('unknown_submit_at', 'is', null)
    .where('deployment_handle', 'is', null)
    .executeTakeFirst();
  return Number(marked.numUpdatedRows) === 1;
}
