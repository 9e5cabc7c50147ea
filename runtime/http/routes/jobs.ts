import type { Handlers } from '../../../generated/routes.js';
import { creditsToUsd } from '../../../generated/support.js';
import { formatMessage } from '../../../generated/errors.js';
import { ownerOf } from '../../assets/library.js';
import { applyAssetReferences } from '../../assets/references.js';
import { outboundPolicy } from '../../config.js';
import { ApiError } from '../../errors.js';
import { QUOTE_TTL_MS, signQuote } from '../../quotes/quotes.js';
import { acceptTask, type Created } from '../../tasks/create-task.js';
import { checkQuote, prepareRequest, type PreparedRequest } from '../../tasks/prepare-request.js';
import { sourceClipsOf } from '../../tasks/source-clip.js';
import { ALL_STATES, isTerminal } from '../../tasks/states.js';
import { taskRecord } from '../../tasks/task-record.js';
import { listTasksOfCaller, purgeTaskContent, taskOfCaller } from '../../tasks/task-queries.js';
import type { ApiRequest } from '../api-request.js';

type JobHandlers = Pick<Handlers<ApiRequest>, 'quoteTask' | 'createTask' | 'getTaskRecord' | 'retryTask' | 'purgeTask' | 'listTasks'>;

const NO_STORE = { 'Cache-Control': 'no-store' };

/** `wait`: a positive integer of seconds, clamped to 60; anything else is ignored, not rejected. */
export function parseWait(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{1,6}$/.test(value)) return undefined;
  const seconds = Number(value);
  return seconds > 0 ? Math.min(seconds, 60) : undefined;
}

/** Idempotency-Key: 1 to 255 visible ASCII characters. */
export function parseIdempotencyKey(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!/^[\x21-\x7e]{1,255}$/.test(value)) throw new ApiError('invalid_idempotency_key', {}, [], 'Idempotency-Key');
  return value;
}

export function parseRetention(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,10}$/.test(value) || Number(value) < 1) throw new ApiError('invalid_parameter', { param: 'X-Service-Retention' }, [], 'X-Service-Retention');
  return Number(value);
}

/** Admission as createTask does it, short of writing: a deployment is available and the balance covers the hold. */
async function admit(req: ApiRequest, request: PreparedRequest): Promise<void> {
  if (!req.ctx.deployments.pick(request.model.info)) throw new ApiError('no_deployment');
  const wallet = await req.ctx.db.kysely.selectFrom('wallets').select('available').where('account_id', '=', req.caller.accountId).executeTakeFirstOrThrow();
  if (wallet.available < request.price.maxCredits) throw new ApiError('insufficient_credits', { required: request.price.maxCredits, available: wallet.available });
}

/** Holds the response for up to `wait` seconds; woken by the task's resolution, not by polling. */
async function replyWithTask(req: ApiRequest, created: Created, wait: number | undefined, acceptedStatus: number) {
  const { ctx } = req;
  let row = created.task;
  if (wait !== undefined && !isTerminal(row.state)) {
    const waiter = ctx.events.waitFor(row.id, wait * 1000, req.disconnected);
    // Re-read after subscribing, so a resolution between the insert and here is not missed.
    const current = await ctx.db.kysely.selectFrom('tasks').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
    if (isTerminal(current.state)) waiter.cancel();
    else await waiter.promise;
    row = await ctx.db.kysely.selectFrom('tasks').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
  }
  const terminal = isTerminal(row.state);
  const headers: Record<string, string> = { ...NO_STORE, Location: `/api/v1/jobs/recordInfo?taskId=${encodeURIComponent(row.id)}` };
  if (!terminal) headers['Retry-After'] = String(ctx.config.pollHintSeconds);
  if (created.replayed) headers['Idempotent-Replayed'] = 'true';
  return { status: terminal && wait !== undefined ? 200 : acceptedStatus, data: taskRecord(ctx, row, req.language), headers };
}

export const jobHandlers: JobHandlers = {
  async quoteTask(req) {
    const { ctx, caller } = req;
    const request = await prepareRequest(req.body, outboundPolicy(ctx.config), sourceClipsOf(ctx, caller));
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
        breakdown: { rate: price.rate, rateHundredths: price.rateHundredths, billableSeconds: price.billableSeconds, maxBillableSeconds: price.maxBillableSeconds, options: price.options },
        warnings: request.warnings.map((w) => ({ code: w.code, path: w.path, message: formatMessage(w.message, req.language) })),
      },
    };
  },

  async createTask(req) {
    const { ctx, caller } = req;
    const wait = parseWait(req.query('wait'));
    const idempotencyKey = parseIdempotencyKey(req.header('idempotency-key'));
    const retentionSeconds = parseRetention(req.header('x-service-retention'));
    const request = await prepareRequest(req.body, outboundPolicy(ctx.config), sourceClipsOf(ctx, caller));
    // The quote is checked for a new task only: a replay of an accepted Idempotency-Key returns the original task.
    const beforeHold = () => checkQuote(ctx.secret, caller, request, ctx.clock.now());
    const created = await acceptTask(ctx, caller, request, { requestId: req.requestId, idempotencyKey, idempotencyScope: 'create', retentionSeconds, beforeHold });
    return replyWithTask(req, created, wait, 202);
  },

  async getTaskRecord(req) {
    const taskId = req.query('taskId');
    if (taskId === undefined || taskId.length === 0) throw new ApiError('invalid_parameter', { param: 'taskId' }, [], 'taskId');
    const row = await taskOfCaller(req.ctx, req.caller, taskId);
    return { status: 200, data: taskRecord(req.ctx, row, req.language), headers: NO_STORE };
  },

  async retryTask(req) {
    const { ctx, caller } = req;
    const body = req.body as { taskId?: unknown } | null;
    const source = await taskOfCaller(ctx, caller, body?.taskId);
    if (source.state !== 'failed' && source.state !== 'expired') throw new ApiError('retry_not_allowed', {}, [], 'taskId');
    if (source.input_json === null) throw new ApiError('retry_not_allowed', {}, [], 'taskId');
    const idempotencyKey = parseIdempotencyKey(req.header('idempotency-key'));
    // Everything is evaluated again: schema, price, permissions, balance, availability.
    const request = await prepareRequest({ model: source.model, input: JSON.parse(source.input_json), ...(source.callback_url ? { callBackUrl: source.callback_url } : {}) }, outboundPolicy(ctx.config), sourceClipsOf(ctx, caller));
    const created = await acceptTask(ctx, caller, request, { requestId: req.requestId, idempotencyKey, idempotencyScope: `retry:${source.id}`, retryOf: source.id });
    return replyWithTask(req, created, undefined, 200);
  },

  async purgeTask(req) {
    const body = req.body as { taskId?: unknown } | null;
    const task = await taskOfCaller(req.ctx, req.caller, body?.taskId);
    const purgedAt = await purgeTaskContent(req.ctx, task);
    return { status: 200, data: { taskId: task.id, purgedAt: new Date(purgedAt).toISOString(), billingRetained: true as const } };
  },

  async listTasks(req) {
    const limitText = req.query('limit');
    const limit = limitText === undefined ? 20 : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new ApiError('invalid_parameter', { param: 'limit' }, [], 'limit');
    const state = req.query('state');
    if (state !== undefined && !(ALL_STATES as readonly string[]).includes(state)) throw new ApiError('invalid_parameter', { param: 'state' }, [], 'state');
    const page = await listTasksOfCaller(req.ctx, req.caller, { cursor: req.query('cursor'), limit, state, model: req.query('model') });
    return { status: 200, data: { items: page.rows.map((row) => taskRecord(req.ctx, row, req.language)), nextCursor: page.nextCursor }, headers: NO_STORE };
  },
};
