import { settledClipSeconds } from '../assets/clip-lengths.js';
import { checkTaskReferences, fetchesReferences } from '../assets/run-check.js';
import type { Context } from '../context.js';
import type { Deployment, DeploymentJob } from '../deployments/deployment.js';
import { ResultTooLargeError, UpstreamError } from '../deployments/upstream-error.js';
import { recordCallAnswered, recordCallFailure } from '../routing/health.js';
import { expireTask, failTask, succeedTask } from '../tasks/resolve-task.js';
import { isTerminal } from '../tasks/states.js';
import type { TaskRow } from '../tasks/task-record.js';
import { keepHandleOfEndedTask, markRunning } from '../tasks/run-start.js';
import { recordPollProgress } from '../tasks/poll-progress.js';
import { keepReferenceClipSeconds } from '../tasks/submit-marks.js';
import { taskById } from '../tasks/task-rows.js';
import { newId } from '../ids.js';
import { purgeTaskContent } from '../tasks/task-queries.js';
import { checkedBefore, checkWorkHandlers, sendToCheck } from './check-work.js';
import { completedJobCost, recordJobCost } from './job-cost.js';
import { outputsToStore } from './output-limit.js';
import { resultAgainstRequest } from './result-check.js';
import { storeOutputs, upstreamCostMicros } from './store-outputs.js';
import { submitTask } from './submit.js';
import { taskSignal } from './task-signal.js';
import { jobOf, releaseResult, timeBoxed, upstreamReason } from './task-job.js';
import { scheduleWork } from '../queue/schedule-work.js';
import { writeTransaction } from '../storage/write-transaction.js';
import { upstreamCancelWorkHandlers } from './upstream-cancel.js';
import { reconcileWorkHandlers, scheduleReconcile } from './reconcile.js';
import { findJobWorkHandlers } from './find-job.js';
import type { WorkHandler, WorkHandlers, WorkItem, WorkOutcome } from '../queue/work-handler.js';

/** A deployment that keeps failing to answer is given up after this many polls in a row; the task fails and the hold is released. */
const MAX_POLL_FAILURES = 8;
/** Longest wait before the first poll of a started task (later polls follow the deployment's retryAfterMs, also capped at 30 s). */
const FIRST_POLL_CAP_MS = 30_000;
/** A task's reason when its provider canceled the job on its own side (generation_failed: the codes stay as they are). */
export const PROVIDER_CANCELED = 'The provider canceled the generation.';
/** Longest wait for the upstream to free what it kept of a stored result (best effort). */
const RELEASE_TIMEOUT_MS = 10_000;

async function loadTask(ctx: Context, item: WorkItem): Promise<TaskRow | undefined> {
  return taskById(ctx.db, item.task_id!);
}

/**
 * queued -> running: the task is routed and submitted to a deployment (runtime/worker/submit.ts),
 * then polled. The upstream's handle is stored even when the task ended meanwhile (its deadline):
 * then the job is cancelled where the protocol allows, so nothing runs on for an ended task.
 */
const runTask: WorkHandler = async (ctx, item) => {
  const task = await loadTask(ctx, item);
  if (!task || isTerminal(task.state)) return { done: true };
  if (!task.deployment && !checkedBefore(item)) {
    // External files are fetched in the check lane (runtime/worker/check-work.ts), which writes a checked run item back.
    if (fetchesReferences(ctx, task)) {
      await sendToCheck(ctx, item);
      return { done: true };
    }
    // Reference limits checked during generation (assets only: no network): a problem fails the task, hold released.
    const checked = await checkTaskReferences(ctx, task);
    if (checked.problem) {
      await failTask(ctx, task.id, checked.problem.code, checked.problem.detail);
      return { done: true };
    }
    await keepReferenceClipSeconds(ctx.db.kysely, task.id, checked.clipSeconds);
  }
  let deployment: Deployment;
  let handle: string;
  let job: DeploymentJob;
  if (task.deployment_handle) {
    // Submitted and its handle stored before a crash: only the running state and the poll item are missing.
    const pinned = ctx.deployments.byName(task.deployment ?? '');
    if (!pinned) return failUnknownDeployment(ctx, task);
    [deployment, handle, job] = [pinned, task.deployment_handle, await jobOf(ctx, task)];
  } else {
    const outcome = await submitTask(ctx, task);
    if ('waitUntil' in outcome) return { retryAt: outcome.waitUntil };
    if ('ended' in outcome) return { done: true };
    ({ deployment, handle, job } = outcome.submitted);
  }
  ctx.faults.reach('run.started'); // the deployment has the job; the handle is not yet stored
  const now = ctx.clock.now();
  // Polling before the deployment can have finished only costs statements; the cap keeps progress moving.
  const firstPollAt = now + Math.max(0, Math.min(FIRST_POLL_CAP_MS, deployment.firstPollAfterMs?.(job) ?? 0));
  // One poll chain per task: a run item taken over after a crash finds the task running, its poll item already written.
  const started = await markRunning(ctx.db, { id: task.id, handle }, now, firstPollAt);
  // Not queued any more: the task ended while the submit was on its way.
  const cancelAfter = started ? false : await keepHandleForCancel(ctx, task.id, handle, deployment, now);
  if (cancelAfter) ctx.wakeWorkers();
  ctx.faults.reach('run.running'); // running and its poll item committed; the run item not yet done
  return { done: true };
};

/**
 * The handle of a task that ended while its submit was on its way, kept so that the job can be
 * found and stopped: true when an upstream-cancel item was written (the workers are woken for it).
 */
function keepHandleForCancel(
  ctx: Context,
  taskId: string,
  handle: string,
  deployment: Deployment,
  now: number,
): Promise<boolean> {
  return writeTransaction(ctx.db, async (trx) => {
    if (!(await keepHandleOfEndedTask(trx, taskId, handle, now))) return false;
    // Whether or not it can be stopped, how the job ends is learned later (./reconcile.ts).
    await scheduleReconcile(trx, now, ctx, taskId);
    if (!deployment.cancel) return false;
    await scheduleWork(trx, now, { kind: 'upstream-cancel', taskId, dueAt: now });
    return true;
  });
}

async function failUnknownDeployment(ctx: Context, task: TaskRow): Promise<WorkOutcome> {
  ctx.log.error(
    { task: task.id, deployment: task.deployment },
    'the task is pinned to a deployment the deployments file no longer has',
  );
  await failTask(ctx, task.id, 'internal_error', null);
  return { done: true };
}

/**
 * Whether a failed poll or download says the deployment is unwell: not a 429 (the upstream pacing
 * its callers), a result link the outbound guard refused, or a result larger than the service
 * takes (the upstream answered; the job or its link is the problem).
 */
function countsAgainstHealth(failure: UpstreamError): boolean {
  return !(failure instanceof ResultTooLargeError) && failure.failure !== 'busy' && failure.failure !== 'rejected';
}

/**
 * A poll that failed: tried again after the upstream's Retry-After or a growing pause; after
 * MAX_POLL_FAILURES in a row (or a job the upstream lost) the task fails, hold released. A 429 is
 * the upstream pacing its callers, not the job failing: it does not count (the deadline bounds it).
 */
async function pollFailed(
  ctx: Context,
  task: TaskRow,
  item: WorkItem,
  deployment: Deployment,
  error: unknown,
  call: 'poll' | 'download',
): Promise<WorkOutcome> {
  const failure = error instanceof UpstreamError ? error : new UpstreamError('protocol', (error as Error).message);
  ctx.upstreamStats.failed(deployment.name, failure.failure);
  if (countsAgainstHealth(failure)) await recordCallFailure(ctx, deployment.name, call, failure, { task });
  // Asking again would fetch the same file up to the cap again: the task fails, hold released.
  if (failure instanceof ResultTooLargeError) {
    ctx.log.warn(
      { task: task.id, deployment: deployment.name, err: failure },
      'the result is too large; the task fails',
    );
    await failTask(
      ctx,
      task.id,
      'generation_failed',
      `The provider's result is larger than the ${failure.maxBytes} bytes the service accepts.`,
    );
    return { done: true };
  }
  // Lost (404) and refused (a result link the outbound guard will not fetch) do not get better by asking again.
  const final = failure.failure === 'lost' || failure.failure === 'rejected';
  if (final || (item.attempts >= MAX_POLL_FAILURES && failure.failure !== 'busy')) {
    ctx.log.warn(
      { task: task.id, deployment: deployment.name, err: failure },
      final
        ? `the upstream's answer cannot be used (${failure.failure}); the task fails`
        : 'the deployment kept failing to answer; the task fails',
    );
    await failTask(ctx, task.id, 'internal_error', null);
    return { done: true };
  }
  ctx.log.warn(
    { task: task.id, deployment: deployment.name, err: failure, attempt: item.attempts },
    'poll failed; trying again',
  );
  const retryAt =
    ctx.clock.now() + (failure.details.retryAfterMs ?? Math.min(60_000, 1000 * 2 ** Math.min(item.attempts, 6)));
  return failure.failure === 'busy' ? { retryAt, attempts: Math.max(0, item.attempts - 1) } : { retryAt };
}

/**
 * Asks the deployment how the task stands; records progress or resolves it once. Its downloads end
 * with the item's signal or at the task's deadline, whichever comes first (runtime/worker/task-signal.ts).
 */
const pollTask: WorkHandler = async (ctx, item, signal): Promise<WorkOutcome> => {
  const task = await loadTask(ctx, item);
  if (!task || isTerminal(task.state) || !task.deployment_handle) return { done: true };
  const deployment = ctx.deployments.byName(task.deployment ?? '');
  if (!deployment) return failUnknownDeployment(ctx, task);
  const bound = taskSignal(signal, task.deadline_at - ctx.clock.now());
  const cutBy: CutBy = () => (bound.deadlinePassed ? 'deadline' : signal?.aborted ? 'item' : undefined);
  try {
    // The downloads and the status request alike end with the item (shutdown, lease lost) or at the deadline.
    const job = { ...(await jobOf(ctx, task)), signal: bound.signal, requestSignal: bound.signal };
    return await pollJob(ctx, item, { ...task, deployment_handle: task.deployment_handle }, deployment, job, cutBy);
  } finally {
    bound.clear();
  }
};

/** Why a poll's download was cut: the task's deadline, or the item's own signal (undefined: neither). */
type CutBy = () => 'deadline' | 'item' | undefined;

/** The poll itself, with the job's downloads bounded. */
async function pollJob(
  ctx: Context,
  item: WorkItem,
  task: TaskRow & { deployment_handle: string },
  deployment: Deployment,
  job: DeploymentJob,
  cutBy: CutBy,
): Promise<WorkOutcome> {
  const asked = performance.now();
  let status;
  try {
    status = await timeBoxed(deployment.poll(task.deployment_handle, job), task.deadline_at - ctx.clock.now(), 'poll');
  } catch (error) {
    // Cut by the worker (shutdown, lease lost): left to run again, nothing counted against the deployment.
    if (cutBy() === 'item') throw error;
    // Cut at the deadline: the task's expire item ends it.
    if (cutBy() === 'deadline') return { done: true };
    return pollFailed(ctx, task, item, deployment, error, 'poll');
  }
  ctx.upstreamStats.polled(deployment.name, performance.now() - asked);
  await recordCallAnswered(ctx, deployment);
  const now = ctx.clock.now();
  if (status.state === 'running') {
    await recordPollProgress(ctx.db, task.id, status.progress, now);
    return { retryAt: now + Math.max(20, Math.min(30_000, status.retryAfterMs)), attempts: 0 };
  }
  ctx.faults.reach('poll.answered'); // the deployment's final answer (succeeded or failed), nothing recorded
  if (status.state === 'failed') {
    await failTask(
      ctx,
      task.id,
      status.code ?? 'generation_failed',
      upstreamReason(status.reason, task, task.deployment_handle) || null,
    );
    return { done: true };
  }
  if (status.state === 'canceled') {
    // A provider handed the task's deadline (a time limit) stops the job there: the deadline's outcome, not a failure.
    if (now >= task.deadline_at) {
      await expireTask(ctx, task.id);
      return { done: true };
    }
    // The service never polls a job it asked to cancel (its task ended first): this cancel is the provider's own.
    ctx.log.warn(
      { task: task.id, deployment: deployment.name, reason: status.reason },
      'the provider canceled the job; the task fails',
    );
    await failTask(ctx, task.id, 'generation_failed', PROVIDER_CANCELED);
    return { done: true };
  }
  // The provider completed the job: the operator owes it, whatever becomes of the task from here (N3, N6).
  const route = ctx.deployments.routeOf(job.model, deployment.name);
  await recordJobCost(ctx, task.id, completedJobCost(route?.cost, status.outputSeconds, job), 'while-running');
  // Reference clips are billed at the lengths the check measured before the submit: never fetched again now.
  const clips = settledClipSeconds(task);
  if ('unmeasured' in clips) {
    await failTask(ctx, task.id, 'reference_invalid', `${clips.unmeasured}: the clip's length was not measured.`);
    return { done: true };
  }
  let stored;
  try {
    // Keys of this run of the poll item alone (a random claim id; attempts can repeat once a handler resets them).
    const claim = newId('c', 6);
    stored = await storeOutputs(ctx, task, outputsToStore(job.model, job.input, status.outputs), claim);
  } catch (error) {
    // Cut by the worker (shutdown, lease lost): the worker leaves the item to run again, nothing recorded here.
    if (cutBy() === 'item') throw error;
    // Cut at the deadline: nothing was kept, and the task's expire item ends it.
    if (cutBy() === 'deadline') return { done: true };
    // A download cut short: nothing of it was kept; the next poll hands out fresh links.
    return pollFailed(ctx, task, item, deployment, error, 'download');
  }
  if (!stored.ok) {
    await failTask(ctx, task.id, 'generation_failed', stored.reason);
    return { done: true };
  }
  const { outputs } = stored;
  // A result unlike the request is never charged as if it matched (runtime/worker/result-check.ts).
  const verdict = resultAgainstRequest(job.model, job.input, stored.firstVideo);
  if (verdict.kind === 'mismatch') {
    await failTask(ctx, task.id, 'generation_failed', verdict.detail, [verdict.warning]);
    // Nothing of it is kept, unless a second poll of the same job settled the task meanwhile (its media, same keys).
    if ((await loadTask(ctx, item))?.state !== 'succeeded')
      for (const output of outputs) await ctx.blobs.delete(output.key);
    await recordJobCost(
      ctx,
      task.id,
      upstreamCostMicros(route?.cost, stored.firstVideoSeconds ?? 0),
      'unless-succeeded',
    );
    await releaseResult(ctx, deployment, task, job, RELEASE_TIMEOUT_MS);
    return { done: true };
  }
  const outputSeconds =
    verdict.kind === 'shorter' ? verdict.seconds : (status.outputSeconds ?? stored.firstVideoSeconds ?? 0);
  ctx.faults.reach('poll.stored'); // media stored, the hold not yet settled
  const cost = upstreamCostMicros(route?.cost, outputSeconds);
  const resolved = await succeedTask(ctx, task.id, {
    outputs,
    outputSeconds,
    referenceClipSeconds: clips.seconds,
    sourceClipSeconds: status.sourceClipSeconds,
    upstreamCostMicros: cost,
    ...(verdict.kind === 'shorter' ? { warnings: [verdict.warning] } : {}),
  });
  // A result after expiry, or after another claim's success (a lease taken over mid-poll), settles nothing and keeps
  // nothing: these keys are this claim's own, never the winner's.
  if (!resolved) {
    for (const output of outputs) await ctx.blobs.delete(output.key);
    await recordJobCost(ctx, task.id, cost, 'unless-succeeded'); // the measured length, on a task that ended otherwise
  }
  // The bytes are ours now: the upstream may let go of them.
  await releaseResult(ctx, deployment, task, job, RELEASE_TIMEOUT_MS);
  return { done: true };
}

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

export const taskWorkHandlers = {
  run: runTask,
  poll: pollTask,
  expire: expireDueTask,
  purge: purgeExpiredContent,
  ...checkWorkHandlers,
  ...upstreamCancelWorkHandlers,
  ...reconcileWorkHandlers,
  ...findJobWorkHandlers,
} satisfies WorkHandlers;
