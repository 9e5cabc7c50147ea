import type { Selectable } from 'kysely';
import { outboundPolicy } from '../config.js';
import type { Context } from '../context.js';
import type { Database } from '../storage/schema.js';
import type { WorkHandler, WorkOutcome } from '../queue/work-handler.js';
import { postOnce, type PostResult } from '../net/outbound.js';
import { endpointSignatureHeader, signCallback, unixSeconds } from './signing.js';

export type Delivery = Selectable<Database['webhook_deliveries']>;

/** The waits before retries 1..7, after a failed attempt: 10 s, 30 s, 2 min, 10 min, 30 min, 2 h, 6 h. */
export const RETRY_DELAYS_MS = [10_000, 30_000, 120_000, 600_000, 1_800_000, 7_200_000, 21_600_000] as const;
/** The first attempt and its seven retries. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

export const USER_AGENT = 'Service-Webhook/1';

/** A delivery row with what signs it: the account's secret (callbacks) or the endpoint's secrets (endpoints). */
export type DeliveryToSign = Delivery & {
  account_secret: string | null;
  endpoint_secret: string | null;
  endpoint_previous_secret: string | null;
  endpoint_previous_until: number | null;
  endpoint_disabled_at: number | null;
};

/** A pending delivery and its signing secrets, read in one statement. */
async function deliveryToSign(ctx: Context, deliveryId: string): Promise<DeliveryToSign | undefined> {
  return ctx.db.kysely
    .selectFrom('webhook_deliveries as d')
    .leftJoin('accounts as a', 'a.id', 'd.account_id')
    .leftJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .selectAll('d')
    .select([
      'a.webhook_secret as account_secret',
      'e.secret as endpoint_secret',
      'e.previous_secret as endpoint_previous_secret',
      'e.previous_until as endpoint_previous_until',
      'e.disabled_at as endpoint_disabled_at',
    ])
    .where('d.id', '=', deliveryId)
    .executeTakeFirst();
}

/**
 * The headers of one attempt, signed now with the secret current now (a rotation takes effect at
 * once, for retries too; the secrets are read with the delivery, just before it is sent). Returns
 * the reason instead when there is nobody to deliver to any more (account gone, endpoint disabled).
 * `body` is the delivery's body as sent: it is signed as those bytes, once per signature.
 */
export function signedHeaders(delivery: DeliveryToSign, body: Buffer, now: number): Record<string, string> | string {
  const timestamp = String(unixSeconds(now));
  if (delivery.kind === 'callback') {
    if (delivery.account_secret === null) return 'account no longer exists';
    return {
      'Content-Type': 'application/json',
      'User-Agent': USER_AGENT,
      'X-Webhook-Timestamp': timestamp,
      'X-Webhook-Signature': signCallback(delivery.account_secret, delivery.task_id, Number(timestamp), body),
      'X-Webhook-Payload-Version': String(delivery.payload_version),
    };
  }
  if (delivery.endpoint_secret === null || delivery.endpoint_disabled_at !== null) return 'endpoint disabled';
  const secrets = [delivery.endpoint_secret];
  const previousUntil = delivery.endpoint_previous_until;
  if (delivery.endpoint_previous_secret && previousUntil !== null && previousUntil > now)
    secrets.push(delivery.endpoint_previous_secret);
  return {
    'Content-Type': 'application/json',
    'User-Agent': USER_AGENT,
    'webhook-id': delivery.id,
    'webhook-timestamp': timestamp,
    'webhook-signature': endpointSignatureHeader(secrets, delivery.id, Number(timestamp), body),
  };
}

function describe(result: PostResult): string | null {
  if (result.status === null) return (result.error ?? 'no answer').slice(0, 500);
  if (result.status >= 200 && result.status < 300) return null;
  const kind = result.status >= 300 && result.status < 400 ? 'redirect not followed' : 'non-2xx answer';
  const excerpt = result.responseExcerpt.replace(/\s+/g, ' ').trim().slice(0, 200);
  return `HTTP ${result.status} (${kind})${excerpt ? `: ${excerpt}` : ''}`;
}

/**
 * One attempt of a pending delivery, then its outcome recorded in one statement that also counts
 * the attempt: delivered (2xx), rescheduled per RETRY_DELAYS_MS after the failure, or failed after
 * the eighth attempt. The guard on `attempts` records an attempt once, even if a lease ran out and
 * another worker attempted the same delivery meanwhile (receivers dedupe on the delivery id).
 */
export async function attemptDelivery(ctx: Context, deliveryId: string): Promise<WorkOutcome> {
  const delivery = await deliveryToSign(ctx, deliveryId);
  if (delivery?.state !== 'pending') return { done: true };
  ctx.faults.reach('deliver.claimed'); // the work item is leased, nothing sent
  const startedAt = ctx.clock.now();
  const body = Buffer.from(delivery.body, 'utf8');
  const headers = signedHeaders(delivery, body, startedAt);
  const result: PostResult =
    typeof headers === 'string'
      ? { status: null, error: headers, responseExcerpt: '' }
      : await postOnce(delivery.url, body, headers, {
          policy: outboundPolicy(ctx.config),
          timeoutMs: ctx.config.webhookTimeoutMs,
          agents: ctx.outbound,
        });
  ctx.faults.reach('deliver.sent'); // the receiver has the request (and answered); the attempt is not recorded
  const finishedAt = ctx.clock.now();
  const ok = result.status !== null && result.status >= 200 && result.status < 300;
  const attempt = delivery.round_attempts + 1;
  // Nobody left to deliver to: no point retrying.
  const hopeless = typeof headers === 'string';
  const state = ok ? 'delivered' : hopeless || attempt >= MAX_ATTEMPTS ? 'failed' : 'pending';
  const nextAttemptAt = state === 'pending' ? finishedAt + RETRY_DELAYS_MS[attempt - 1] : null;
  const recorded = await recordAttempt(ctx, delivery, {
    state,
    next_attempt_at: nextAttemptAt,
    last_attempt_at: startedAt,
    last_status: result.status,
    last_error: describe(result),
    delivered_at: ok ? finishedAt : null,
  });
  ctx.faults.reach('deliver.recorded'); // the outcome is recorded; the work item not yet done
  if (!recorded) return { done: true };
  if (state !== 'pending')
    ctx.log.info(
      { delivery: delivery.id, task: delivery.task_id, state, attempts: delivery.attempts + 1 },
      'webhook delivery finished',
    );
  return nextAttemptAt === null ? { done: true } : { retryAt: nextAttemptAt };
}

/** What one attempt sets on its delivery row (its attempt counters are counted up beside them). */
type AttemptOutcome = Pick<
  Delivery,
  'state' | 'next_attempt_at' | 'last_attempt_at' | 'last_status' | 'last_error' | 'delivered_at'
>;

const RECORD_ATTEMPT = `update "webhook_deliveries" set "attempts" = "attempts" + 1, "round_attempts" = "round_attempts" + 1,
  "state" = ?, "next_attempt_at" = ?, "last_attempt_at" = ?, "last_status" = ?, "last_error" = ?, "delivered_at" = ?
  where "id" = ? and "state" = 'pending' and "attempts" = ?`;

/**
 * Records an attempt once (guarded by the attempts the delivery had when it was read); false when
 * another worker recorded it first. On SQLite one prepared statement, committed with the other
 * writes of the same turn of the event loop (storage/sqlite-group-commit.ts).
 */
async function recordAttempt(ctx: Context, delivery: Delivery, outcome: AttemptOutcome): Promise<boolean> {
  const group = ctx.db.sqliteGroup;
  if (group) {
    const { state, next_attempt_at, last_attempt_at, last_status, last_error, delivered_at } = outcome;
    const values = [state, next_attempt_at, last_attempt_at, last_status, last_error, delivered_at];
    return group.run(
      (sqlite) => sqlite.prepare(RECORD_ATTEMPT).run(...values, delivery.id, delivery.attempts).changes === 1,
    );
  }
  const recorded = await ctx.db.kysely
    .updateTable('webhook_deliveries')
    .set((eb) => ({ ...outcome, attempts: eb('attempts', '+', 1), round_attempts: eb('round_attempts', '+', 1) }))
    .where('id', '=', delivery.id)
    .where('state', '=', 'pending')
    .where('attempts', '=', delivery.attempts)
    .executeTakeFirst();
  return Number(recorded.numUpdatedRows) === 1;
}

export function deliverHandler(): WorkHandler {
  return (ctx, item) => attemptDelivery(ctx, item.ref_id!);
}
