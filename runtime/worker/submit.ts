import { catalogue, type ModelInfo } from '../../generated/catalogue.js';
import type { Context } from '../context.js';
import type { Deployment, DeploymentJob } from '../deployments/deployment.js';
import { routeCandidates } from '../routing/candidates.js';
import { giveSlotBack, recordCallAnswered, recordCallFailure, takeSlot, takeTrial } from '../routing/health.js';
import { recover } from '../routing/health-row.js';
import { portableInput } from './portable-input.js';
import { UpstreamError } from '../deployments/upstream-error.js';
import { failTask } from '../tasks/resolve-task.js';
import type { TaskRow } from '../tasks/task-record.js';
import { DEPLOYMENT_CALL_TIMEOUT_MS, jobOf, timeBoxed, upstreamReason } from './task-job.js';
import { upstreamCallbackUrl } from '../upstreams/upstream-callback-url.js';
import { closeWhenWindowPassed, submitWindowEnd } from './submit-window.js';
import { markFirstSubmitAttempt } from '../tasks/submit-marks.js';
import { recordUnknownSubmit } from './unknown-submit.js';

/** How soon a task whose deployments are all full or cooling down looks again (plus up to as much again, so waiting tasks spread out). */
const WAIT_FOR_SLOT_MS = 1000;
/** The longest wait between rounds of a task every deployment of which refused the submit. */
const MAX_ROUND_WAIT_MS = 30_000;

export type SubmitOutcome =
  /** The upstream has the job: its handle, to be stored and polled. */
  | { submitted: { deployment: Deployment; handle: string; job: DeploymentJob } }
  /** Nothing to do now: no slot, or every deployment refused; the run item is due again then. */
  | { waitUntil: number }
  /** The task was resolved (failed, hold released). */
  | { ended: true };

const jitter = (ms: number) => ms + Math.floor(Math.random() * ms);

/** The job as one route's deployment is sent it: the upstream's model id, links it can reach, the callback if it takes one. */
async function routedJob(
  ctx: Context,
  task: TaskRow,
  model: ModelInfo,
  deployment: Deployment,
  upstreamModel: string | undefined,
): Promise<DeploymentJob> {
  const job = await jobOf(ctx, task);
  return {
    ...job,
    ...(upstreamModel !== undefined ? { upstreamModel } : {}),
    portableInput: await portableInput(ctx, task, model, job.input, deployment),
    ...(deployment.callbacks
      ? { upstreamCallbackUrl: upstreamCallbackUrl(ctx.config.publicUrl, ctx.secret, deployment.name, task.id) }
      : {}),
  };
}

type Attempt = { handle: string; job: DeploymentJob } | { error: UpstreamError };

/** One submit, time-boxed by the deadline; anything but an UpstreamError (a time-out of the box) is an unknown outcome. */
async function attempt(
  ctx: Context,
  task: TaskRow,
  model: ModelInfo,
  deployment: Deployment,
  upstreamModel: string | undefined,
): Promise<Attempt> {
  const job = await routedJob(ctx, task, model, deployment, upstreamModel);
  ctx.upstreamStats.submitted(deployment.name);
  try {
    // An upstream's submitTimeoutSeconds longer than the call timeout is waited for (its adapter ends the request then).
    const cap = Math.max(DEPLOYMENT_CALL_TIMEOUT_MS, (deployment.submitTimeoutMs ?? 0) + 5000);
    return { handle: await timeBoxed(deployment.start(job), task.deadline_at - ctx.clock.now(), 'start', cap), job };
  } catch (error) {
    const failure = error instanceof UpstreamError ? error : new UpstreamError('ambiguous', (error as Error).message);
    ctx.upstreamStats.failed(deployment.name, failure.failure);
    return { error: failure };
  }
}

/** A refusal of the request itself: the task fails with the upstream's reason (English, identifiers removed), never tried elsewhere. */
async function refused(
  ctx: Context,
  task: TaskRow,
  deployment: Deployment,
  error: UpstreamError,
  trial = false,
): Promise<SubmitOutcome> {
  await recordCallAnswered(ctx, deployment);
  // A half-open deployment that answered, if only to refuse this request, is up again.
  if (trial) await recover(ctx, deployment.name, 'trial call');
  await failTask(ctx, task.id, 'generation_failed', upstreamReason(error.details.reason ?? '', task) || null);
  return { ended: true };
}

/**
 * An unknown outcome (the body went out, no answer came): the job may exist. With an idempotency
 * key the same deployment is asked again later (the task stays pinned to it); without, the task
 * fails with its hold released rather than risk a second job, and the job it may have made is
 * recorded as possibly abandoned (./unknown-submit.ts).
 */
async function unknownOutcome(
  ctx: Context,
  task: TaskRow,
  deployment: Deployment,
  error: UpstreamError,
  trial = false,
): Promise<SubmitOutcome> {
  await recordCallFailure(ctx, deployment.name, 'submit', error, { task, trial });
  if (deployment.idempotentSubmit)
    return { waitUntil: ctx.clock.now() + Math.max(error.details.retryAfterMs ?? 0, jitter(WAIT_FOR_SLOT_MS)) };
  ctx.log.warn({ task: task.id, deployment: deployment.name, err: error }, 'submit outcome unknown');
  // Recorded before the task fails: the job it may have made is counted, and looked for where the protocol can.
  await recordUnknownSubmit(ctx, task, deployment);
  await failTask(ctx, task.id, 'internal_error', null);
  return { ended: true };
}

/**
 * Submits a queued task. A task already pinned to a deployment without a handle was submitted
 * before with an unknown outcome (an ambiguous answer, or a crash mid-submit): it goes to that
 * deployment again or fails, never elsewhere. Otherwise the routes are tried tier by tier:
 * a slot is taken (maxInFlight), the submit sent; a failure that leaves nothing upstream
 * (refused, unresolvable, 429, 5xx, the operator's key refused) gives the slot back and is the
 * task's evidence against the deployment (runtime/routing/evidence.ts: it counts once per task,
 * and cools the deployment for everyone only on many owners' evidence), and the next route is tried.
 */
export async function submitTask(ctx: Context, task: TaskRow): Promise<SubmitOutcome> {
  const model = catalogue.get(task.model)!.info;
  const input = JSON.parse(task.input_json ?? '{}') as Record<string, unknown>;
  if (task.deployment) {
    const deployment = ctx.deployments.byName(task.deployment);
    if (!deployment) {
      ctx.log.error(
        { task: task.id, deployment: task.deployment },
        'the task was being submitted to a deployment the deployments file no longer has',
      );
      await failTask(ctx, task.id, 'internal_error', null);
      return { ended: true };
    }
    if (!deployment.idempotentSubmit)
      return unknownOutcome(
        ctx,
        task,
        deployment,
        new UpstreamError('ambiguous', 'a submit was under way when the service stopped'),
      );
    const result = await attempt(
      ctx,
      task,
      model,
      deployment,
      ctx.deployments.routeOf(model, deployment.name)?.upstreamModel,
    );
    if ('handle' in result) return { submitted: { deployment, ...result } };
    if (result.error.failure === 'rejected') return refused(ctx, task, deployment, result.error);
    // Refused now says nothing about the first send: still unknown, still this deployment's.
    return unknownOutcome(ctx, task, deployment, result.error);
  }

  const routes = ctx.deployments.routesFor(model, input).filter((r) => r.deployment.isAvailable());
  if (routes.length === 0) {
    ctx.log.error({ task: task.id, model: model.id }, 'no deployment routes the task any more');
    await failTask(ctx, task.id, 'internal_error', null);
    return { ended: true };
  }
  // Submits that kept failing since the first attempt: given up, hold released (./submit-window.ts).
  if (await closeWhenWindowPassed(ctx, task)) return { ended: true };
  let tried = 0;
  let hintMs = 0;
  const roundAt = ctx.clock.now();
  const { order, failing, trials, allCooling } = await routeCandidates(ctx, routes, task.account_id);
  // Every deployment cooling down counts as a failed attempt: the window starts (a slot taken starts it in takeSlot).
  if (allCooling && task.first_submit_at === null) await markFirstSubmitAttempt(ctx.db.kysely, task.id, roundAt);
  for (const route of order) {
    const { deployment } = route;
    if (!(await takeSlot(ctx, task.id, task.account_id, deployment.name))) continue;
    // A half-open deployment takes one trial call at a time: another task has it, so this one goes elsewhere or waits.
    const trial = trials.has(deployment.name);
    if (trial && !(await takeTrial(ctx, deployment.name))) {
      await giveSlotBack(ctx, task.id, deployment.name);
      continue;
    }
    tried++;
    const result = await attempt(ctx, task, model, deployment, route.upstreamModel);
    if ('handle' in result) {
      if (trial) await recover(ctx, deployment.name, 'trial call');
      if (failing.has(deployment.name)) await recordCallAnswered(ctx, deployment);
      else ctx.callWindow.add(deployment.name, false, ctx.clock.now());
      return { submitted: { deployment, ...result } };
    }
    const { error } = result;
    if (error.failure === 'rejected') return refused(ctx, task, deployment, error, trial);
    if (!error.failsOver) return unknownOutcome(ctx, task, deployment, error, trial);
    if (error.failure === 'configuration')
      // The operator's fault, logged so it is seen: the deployment and the URL path (no query; the key was redacted at the adapter).
      ctx.log.warn(
        { task: task.id, deployment: deployment.name, status: error.details.status, path: error.details.path },
        `deployment ${deployment.name} answered ${error.details.status ?? 'not found'} to a submit at ${error.details.path}: its baseUrl or path is wrong; trying the next deployment`,
      );
    else
      ctx.log.warn(
        { task: task.id, deployment: deployment.name, failure: error.failure, detail: error.message },
        'submit failed; trying the next deployment',
      );
    await giveSlotBack(ctx, task.id, deployment.name);
    await recordCallFailure(ctx, deployment.name, 'submit', error, { task, trial });
    hintMs = Math.max(hintMs, error.details.retryAfterMs ?? 0);
  }
  const now = ctx.clock.now();
  // Every open deployment refused: the next round after the upstreams' Retry-After (or a growing pause); none had a slot: soon.
  const next =
    tried > 0
      ? now + Math.min(MAX_ROUND_WAIT_MS, Math.max(hintMs, jitter(WAIT_FOR_SLOT_MS)))
      : now + jitter(WAIT_FOR_SLOT_MS);
  // A round that failed or found every deployment cooling: the next round no later than the window's end, which fails the task.
  const firstAttempt = task.first_submit_at ?? (tried > 0 || allCooling ? roundAt : undefined);
  return { waitUntil: firstAttempt === undefined ? next : Math.min(next, submitWindowEnd(ctx, firstAttempt)) };
}
