import type { Handlers } from '../../../generated/routes.js';
import { creditsToUsd } from '../../../generated/support.js';
import { formatMessage } from '../../../generated/errors.js';
import { ownerOf } from '../../assets/library.js';
import { applyAssetReferences } from '../../assets/references.js';
import { outboundPolicy } from '../../config.js';
import { ApiError } from '../../errors.js';
import { QUOTE_TTL_MS, signQuote } from '../../quotes/quotes.js';
import { acceptTask, type Created } from '../../tasks/create-task.js';
import { inputNotServed } from '../../tasks/input-not-served.js';
import { checkQuote, prepareRequest, type PreparedRequest } from '../../tasks/prepare-request.js';
import { applyModelSunset } from '../../tasks/model-sunset.js';
import { sourceClipsOf } from '../../tasks/source-clip.js';
import { refuseQuoteByKeyPolicy } from '../../tasks/key-policy-admission.js';
import { isTerminal } from '../../tasks/states.js';
import { taskRecord } from '../../tasks/task-record.js';
import { listTasksOfCaller, purgeTaskContent, taskOfCaller } from '../../tasks/task-queries.js';
import { existingTask } from '../../tasks/task-rows.js';
import type { ApiRequest, ApiRequests } from '../api-request.js';
import { coolingRefusal } from '../cooling-refusal.js';
import { debtRefusal } from '../debt-refusal.js';

type JobHandlers = Pick<
  Handlers<ApiRequests>,
  'quoteTask' | 'createTask' | 'getTaskRecord' | 'retryTask' | 'purgeTask' | 'listTasks'
>;

const NO_STORE = { 'Cache-Control': 'no-store' };

/** `wait`: a positive integer of seconds, clamped to 60; anything else is ignored, not rejected. */
export function parseWait(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{1,6}$/.test(value)) return undefined;
  const seconds = Number(value);
  return seconds > 0 ? Math.min(seconds, 60) : undefined;
}

/** Admission as createTask does it, short of writing: a deployment is available and the balance covers the hold. */
async function admit(req: ApiRequest<'quoteTask'>, request: PreparedRequest): Promise<void> {
  const notServed = inputNotServed(req.ctx, request);
  if (notServed) throw notServed;
  if (!req.ctx.deployments.serves(request.model.info, request.input)) throw new ApiError('no_deployment');
  // The key's policy, then debt, then funds, then availability (docs/contracts.md, the refusal order).
  await refuseQuoteByKeyPolicy(req.ctx, req.caller, request);
  const debt = await debtRefusal(req.ctx, req.caller.accountId);
  if (debt) throw debt;
  const wallet = await req.ctx.ledger.balance(req.ctx.db, req.caller.accountId);
  if (wallet.available < request.price.maxCredits)
    throw new ApiError('insufficient_credits', {
      params: { required: request.price.maxCredits, available: wallet.available },
    });
  const cooling = await coolingRefusal(req.ctx, request, req.caller.accountId);
  if (cooling) throw cooling;
}

/** Holds the response for up to `wait` seconds; woken by the task's resolution, not by polling. */
async function replyWithTask(
  req: ApiRequest<'createTask' | 'retryTask'>,
  created: Created,
  wait: number | undefined,
  acceptedStatus: number,
) {
  const { ctx } = req;
  let row = created.task;
  if (wait !== undefined && !isTerminal(row.state)) {
    const waiter = ctx.events.waitFor(row.id, wait * 1000, req.disconnected);
    // Re-read after subscribing, so a resolution between the insert and here is not missed.
    const current = await existingTask(ctx.db.kysely, row.id);
    if (isTerminal(current.state)) waiter.cancel();
    else await waiter.promise;
    row = await existingTask(ctx.db.kysely, row.id);
  }
  const terminal = isTerminal(row.state);
  const headers: Record<string, string> = {
    ...NO_STORE,
    Location: `/api/v1/jobs/recordInfo?taskId=${encodeURIComponent(row.id)}`,
  };
  if (!terminal) headers['Retry-After'] = String(ctx.config.pollHintSeconds);
  if (created.replayed) headers['Idempotent-Replayed'] = 'true';
  return {
    status: terminal && wait !== undefined ? 200 : acceptedStatus,
    data: taskRecord(ctx, row, req.language),
    headers,
  };
}

export const jobHandlers: JobHandlers = {
  async quoteTask(req) {
    const { ctx, caller } = req;
    const request = await prepareRequest(
      req.body,
      outboundPolicy(ctx.config),
      sourceClipsOf(ctx, caller),
      caller.priceBook,
    );
    applyModelSunset(request, ctx.clock.now());
    // As createTask does in acceptTask: asset references checked, measured clip lengths priced.
    await applyAssetReferences(ctx, ownerOf(caller), request);
    await admit(req, request);
    const expiresAt = ctx.clock.now() + QUOTE_TTL_MS;
    const quoteId = signQuote(ctx.secret, {
      accountId: caller.accountId,
      keyId: caller.keyId,
      fingerprint: request.fingerprint,
      estimatedCredits: request.price.estimatedCredits,
      maxCredits: request.price.maxCredits,
      expiresAt,
    });
    const { price } = request;
    return {
      status: 200,
      data: {
        quoteId,
        expiresAt: new Date(expiresAt).toISOString(),
        model: request.model.info.id,
        estimatedCredits: price.estimatedCredits,
        estimatedCost: creditsToUsd(price.estimatedCredits),
        maxCredits: price.maxCredits,
        maxCharge: creditsToUsd(price.maxCredits),
        breakdown: {
          rate: price.rate,
          rateHundredths: price.rateHundredths,
          billableSeconds: price.billableSeconds,
          maxBillableSeconds: price.maxBillableSeconds,
          options: price.options,
        },
        warnings: request.warnings.map((w) => ({
          code: w.code,
          path: w.path,
          message: formatMessage(w.message, req.language),
        })),
      },
    };
  },

  async createTask(req) {
    const { ctx, caller } = req;
    const wait = parseWait(req.query.wait);
    const idempotencyKey = req.headers['Idempotency-Key'];
    const retentionSeconds = req.headers['X-Service-Retention'];
    const request = await prepareRequest(
      req.body,
      outboundPolicy(ctx.config),
      sourceClipsOf(ctx, caller),
      caller.priceBook,
    );
    // The sunset and the quote are checked for a new task only: a replay of an accepted Idempotency-Key returns the original task.
    const cooling = await coolingRefusal(ctx, request, caller.accountId);
    const debt = await debtRefusal(ctx, caller.accountId);
    const beforeHold = () => {
      applyModelSunset(request, ctx.clock.now());
      checkQuote(ctx.secret, caller, request, ctx.clock.now());
      if (debt) throw debt;
      if (cooling) throw cooling;
    };
    const created = await acceptTask(ctx, caller, request, {
      requestId: req.requestId,
      idempotencyKey,
      idempotencyScope: 'create',
      retentionSeconds,
      beforeHold,
    });
    return replyWithTask(req, created, wait, 202);
  },

  async getTaskRecord(req) {
    const row = await taskOfCaller(req.ctx, req.caller, req.query.taskId);
    return { status: 200, data: taskRecord(req.ctx, row, req.language), headers: NO_STORE };
  },

  async retryTask(req) {
    const { ctx, caller } = req;
    const source = await taskOfCaller(ctx, caller, req.body.taskId);
    if (source.state !== 'failed' && source.state !== 'expired')
      throw new ApiError('retry_not_allowed', { param: 'taskId' });
    if (source.input_json === null) throw new ApiError('retry_not_allowed', { param: 'taskId' });
    const idempotencyKey = req.headers['Idempotency-Key'];
    // Everything is evaluated again: schema, price, permissions, balance, availability.
    const request = await prepareRequest(
      {
        model: source.model,
        input: JSON.parse(source.input_json),
        ...(source.callback_url ? { callBackUrl: source.callback_url } : {}),
      },
      outboundPolicy(ctx.config),
      sourceClipsOf(ctx, caller),
      caller.priceBook,
    );
    const cooling = await coolingRefusal(ctx, request, caller.accountId);
    const debt = await debtRefusal(ctx, caller.accountId);
    const beforeHold = () => {
      applyModelSunset(request, ctx.clock.now());
      if (debt) throw debt;
      if (cooling) throw cooling;
    };
    const created = await acceptTask(ctx, caller, request, {
      requestId: req.requestId,
      idempotencyKey,
      idempotencyScope: `retry:${source.id}`,
      retryOf: source.id,
      beforeHold,
    });
    return replyWithTask(req, created, undefined, 200);
  },

  async purgeTask(req) {
    const task = await taskOfCaller(req.ctx, req.caller, req.body.taskId);
    const purgedAt = await purgeTaskContent(req.ctx, task);
    return {
      status: 200,
      data: { taskId: task.id, purgedAt: new Date(purgedAt).toISOString(), billingRetained: true as const },
    };
  },

  async listTasks(req) {
    const { cursor, limit, state, model } = req.query;
    const page = await listTasksOfCaller(req.ctx, req.caller, { cursor, limit, state, model });
    return {
      status: 200,
      data: { items: page.rows.map((row) => taskRecord(req.ctx, row, req.language)), nextCursor: page.nextCursor },
      headers: NO_STORE,
    };
  },
};
