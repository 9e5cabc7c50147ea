import type { Context } from '../context.js';
import { ApiError } from '../errors.js';
import { allCoolingUntil } from '../routing/availability.js';
import type { PreparedRequest } from '../tasks/prepare-request.js';

/**
 * Fail fast (issue 28): when every deployment that routes the request's model is cooling down or
 * down, for everyone or for the caller's owner alone (issue 37), a new task could only sit `queued` with its credits held. The refusal is 503 no_deployment
 * (50301) with `Retry-After`, the seconds until the soonest deployment leaves its cool-down.
 * Read before acceptance; createTask, retryTask and POST /v1/videos throw it from acceptTask's
 * `beforeHold` (so a replayed Idempotency-Key still answers with its task, and nothing is held or
 * written), quoteTask at once. Undefined: some deployment can be tried.
 */
export async function coolingRefusal(
  ctx: Context,
  request: PreparedRequest,
  accountId: string,
): Promise<ApiError | undefined> {
  const until = await allCoolingUntil(ctx, request.model.info, request.input, accountId);
  if (until === undefined) return undefined;
  // Funds come before availability (docs/contracts.md, the refusal order): a hold the balance
  // cannot cover is refused 402 by the hold itself, whatever the deployments' health.
  if ((await ctx.ledger.balance(ctx.db, accountId)).available < request.price.maxCredits) return undefined;
  const seconds = String(Math.max(1, Math.ceil((until - ctx.clock.now()) / 1000)));
  return new ApiError('no_deployment', { headers: { 'Retry-After': seconds } });
}
