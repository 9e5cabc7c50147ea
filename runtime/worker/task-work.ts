import { catalogue } from '../../generated/catalogue.js';
import { assetClipSeconds, checkReferencesBeforeRun } from '../assets/run-check.js';
import type { Context } from '../context.js';
import { faultPoint } from '../faults.js';
import type { DeploymentJob } from '../deployments/deployment.js';
import { expireTask, failTask, scrubReason, succeedTask } from '../tasks/resolve-task.js';
import { isTerminal } from '../tasks/states.js';
import type { StoredOutput, TaskRow } from '../tasks/task-record.js';
import { purgeTaskContent } from '../tasks/task-queries.js';
import { sourceTaskId, succeededClipSeconds } from '../tasks/source-clip.js';
import type { WorkHandler, WorkItem, WorkOutcome } from './worker.js';

/** A deployment that keeps failing to answer is given up after this many polls; the task fails and the hold is released. */
const MAX_POLL_FAILURES = 8;
/** Longest wait for one deployment call: a deployment that never answers must not stall the worker (its other items, expiries). */
const DEPLOYMENT_CALL_TIMEOUT_MS = 30_000;
/** Longest wait before the first poll of a started task (later polls follow the deployment's retryAfterMs, also capped at 30 s). */
const FIRST_POLL_CAP_MS = 30_000;

/** The call, or an error once `ms` passed (at most the call timeout, at least 50 ms: the task's deadline bounds it). */
function timeBoxed<T>(call: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = Math.max(50, Math.min(DEPLOYMENT_CALL_TIMEOUT_MS, ms));
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`deployment ${what} did not answer within ${limit} ms`)), limit);
  });
  return Promise.race([call, timeout]).finally(() => clearTimeout(timer));
}

async function loadTask(ctx: Context, item: WorkItem): Promise<TaskRow | undefined> {
  return ctx.db.kysely.selectFrom('tasks').selectAll().where('id', '=', item.task_id!).executeTakeFirst();
}

/** The job of a task; a source clip named by task id (checked at acceptance) has that task's output length. */
async function jobOf(ctx: Context, task: TaskRow): Promise<DeploymentJob> {
  const model = catalogue.get(task.model)!.info;
  const input = JSON.parse(task.input_json ?? '{}') as Record<string, unknown>;
  const sourceTask = sourceTaskId(model, input);
  const sourceClipSeconds = sourceTask === undefined ? undefined : await succeededClipSeconds(ctx, task.api_key_id, sourceTask);
  return { taskId: task.id, model, input, ...(sourceClipSeconds === undefined ? {} : { sourceClipSeconds }) };
}

/** queued -> running: start the task on its deployment, then poll it. */
const runTask: WorkHandler = async (ctx, item) => {
  const task = await loadTask(ctx, item);
  if (!task || isTerminal(task.state)) return { done: true };
  const deployment = ctx.deployments.byName(task.deployment ?? '');
  if (!deployment) {
    await failTask(ctx, task.id, 'internal_error', null);
    return { done: true };
  }
  if (!task.deployment_handle) {
    // Reference limits checked during generation (external files fetched through the SSRF guard): a problem fails the task, hold released.
    const problem = await checkReferencesBeforeRun(ctx, task);
    if (problem) {
      await failTask(ctx, task.id, problem.code, problem.detail);
      return { done: true };
    }
  }
  const now = ctx.clock.now();
  const job = await jobOf(ctx, task);
  const handle = task.deployment_handle ?? (await timeBoxed(deployment.start(job), task.deadline_at - now, 'start'));
  faultPoint('run.started'); // the deployment has the job; the handle is not yet stored
  // Polling before the deployment can have finished only costs statements; the cap keeps progress moving.
  const firstPollAt = now + Math.max(0, Math.min(FIRST_POLL_CAP_MS, deployment.firstPollAfterMs?.(job) ?? 0));
  await ctx.db.kysely.transaction().execute(async (trx) => {
    const started = await trx.updateTable('tasks').set({ state: 'running', started_at: now, updated_at: now, deployment_handle: handle }).where('id', '=', task.id).where('state', '=', 'queued').executeTakeFirst();
    // One poll chain per task: a run item taken over after a crash finds the task running, its poll item already written.
    if (Number(started.numUpdatedRows) === 1) await trx.insertInto('work_items').values({ kind: 'poll', task_id: task.id, ref_id: null, due_at: firstPollAt, lease_owner: null, lease_until: null, attempts: 0, done_at: null, created_at: now }).execute();
  });
  faultPoint('run.running'); // running and its poll item committed; the run item not yet done
  return { done: true };
};

/** Asks the deployment how the task stands; records progress or resolves it once. */
const pollTask: WorkHandler = async (ctx, item): Promise<WorkOutcome> => {
  const task = await loadTask(ctx, item);
  if (!task || isTerminal(task.state) || !task.deployment_handle) return { done: true };
  const deployment = ctx.deployments.byName(task.deployment ?? '')!;
  let status;
  try {
    status = await timeBoxed(deployment.poll(task.deployment_handle, await jobOf(ctx, task)), task.deadline_at - ctx.clock.now(), 'poll');
  } catch (error) {
    if (item.attempts >= MAX_POLL_FAILURES) {
      await failTask(ctx, task.id, 'internal_error', null);
      return { done: true };
    }
    throw error;
  }
  const now = ctx.clock.now();
  if (status.state === 'running') {
    await ctx.db.kysely.updateTable('tasks').set({ progress: status.progress, updated_at: now }).where('id', '=', task.id).where('state', '=', 'running').execute();
    return { retryAt: now + Math.max(20, Math.min(30_000, status.retryAfterMs)) };
  }
  faultPoint('poll.answered'); // the deployment's final answer (succeeded or failed), nothing recorded
  if (status.state === 'failed') {
    await failTask(ctx, task.id, 'generation_failed', scrubReason(status.reason) || null);
    return { done: true };
  }
  const outputs: StoredOutput[] = [];
  for (const [index, output] of status.outputs.entries()) {
    const key = `outputs/${task.id}/${index}.${output.extension}`;
    await ctx.blobs.put(key, output.bytes);
    outputs.push({ key, mime: output.mime, durationSeconds: output.durationSeconds });
  }
  faultPoint('poll.stored'); // media stored, the hold not yet settled
  const referenceClipSeconds = status.referenceClipSeconds ?? (await assetClipSeconds(ctx, task));
  const resolved = await succeedTask(ctx, task.id, { outputs, outputSeconds: status.outputSeconds, referenceClipSeconds, sourceClipSeconds: status.sourceClipSeconds });
  // A result after expiry settles nothing and keeps nothing. After a success (a second poll of the same job, e.g. a lease
  // taken over mid-poll) the keys hold the winner's media: they stay.
  if (!resolved && (await loadTask(ctx, item))?.state !== 'succeeded') for (const output of outputs) await ctx.blobs.delete(output.key);
  return { done: true };
};

const expireDueTask: WorkHandler = async (ctx, item) => {
  await expireTask(ctx, item.task_id!);
  return { done: true };
};

/** Retention ran out: the content goes, the billing evidence stays. */
const purgeExpiredContent: WorkHandler = async (ctx, item) => {
  const task = await loadTask(ctx, item);
  if (task && isTerminal(task.state)) await purgeTaskContent(ctx, task);
  return { done: true };
};

export const taskWorkHandlers: Record<string, WorkHandler> = {
  run: runTask,
  poll: pollTask,
  expire: expireDueTask,
  purge: purgeExpiredContent,
};
