import { catalogue } from '../../generated/catalogue.js';
import type { Context } from '../context.js';
import type { Deployment, DeploymentJob } from '../deployments/deployment.js';
import { scrubReason } from '../tasks/resolve-task.js';
import { sourceTaskId, succeededClipSeconds } from '../tasks/source-clip.js';
import type { TaskRow } from '../tasks/task-record.js';

/** Longest wait for one deployment call: a deployment that never answers must not stall the worker (its other items, expiries). */
export const DEPLOYMENT_CALL_TIMEOUT_MS = 30_000;

/** The call, or an error once `ms` passed (at most `capMs`, the call timeout by default; at least 50 ms: the task's deadline bounds it). */
export function timeBoxed<T>(
  call: Promise<T>,
  ms: number,
  what: string,
  capMs = DEPLOYMENT_CALL_TIMEOUT_MS,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = Math.max(50, Math.min(capMs, ms));
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`deployment ${what} did not answer within ${limit} ms`)), limit);
  });
  return Promise.race([call, timeout]).finally(() => clearTimeout(timer));
}

/** The job of a task; a source clip named by task id (checked at acceptance) has that task's output length. */
export async function jobOf(ctx: Context, task: TaskRow): Promise<DeploymentJob> {
  const model = catalogue.get(task.model)!.info;
  const input = JSON.parse(task.input_json ?? '{}') as Record<string, unknown>;
  const sourceTask = sourceTaskId(model, input);
  const sourceClipSeconds =
    sourceTask === undefined ? undefined : await succeededClipSeconds(ctx, task.api_key_id, sourceTask);
  return {
    taskId: task.id,
    model,
    input,
    deadlineAt: task.deadline_at,
    ...(sourceClipSeconds === undefined ? {} : { sourceClipSeconds }),
  };
}

/**
 * An upstream's reason as the task shows it: English as the provider wrote it, without the
 * upstream's own job id (`handle`) and without the identifiers scrubReason removes (task, account
 * and key ids, request ids, UUIDs, emails, long hex, URLs, token shapes, any letters-and-digits id
 * that is not a word of the task's model id). The operator's keys were redacted at the adapter.
 */
export function upstreamReason(reason: string, task: Pick<TaskRow, 'model'>, handle?: string | null): string {
  return scrubReason(reason, { modelId: task.model, handle });
}

/**
 * Tells the upstream it may let go of a finished job's result (its bytes are stored, or never
 * wanted): best effort, time-boxed, a failure only logged (the upstream's own retention covers it).
 */
export async function releaseResult(
  ctx: Context,
  deployment: Deployment,
  task: Pick<TaskRow, 'id'> & { deployment_handle: string },
  job: DeploymentJob,
  timeoutMs: number,
): Promise<void> {
  if (!deployment.release) return;
  await timeBoxed(deployment.release(task.deployment_handle, job), timeoutMs, 'release').catch((error: unknown) =>
    ctx.log.warn({ err: error, task: task.id, deployment: deployment.name }, 'the upstream did not release the result'),
  );
}
