import type { Caller } from '../accounts/accounts.js';
import { ownerOf } from '../assets/library.js';
import { applyAssetReferences } from '../assets/references.js';
import type { Context } from '../context.js';
import { ApiError } from '../errors.js';
import { newOrderedId } from '../ids.js';
import { isUniqueViolation } from '../storage/dialect.js';
import { acceptOnPostgres } from './accept-postgres.js';
import { acceptOnSqlite } from './accept-sqlite.js';
import type { Acceptance, CreateOptions, Created } from './acceptance.js';
import { inputNotServed } from './input-not-served.js';
import type { PreparedRequest } from './prepare-request.js';

export { IDEMPOTENCY_WINDOW_MS, type CreateOptions, type Created } from './acceptance.js';

/**
 * Accepts a prepared request: in one transaction the Idempotency-Key row (or a replay), the hold
 * of maxCredits, the task in `queued` and its first work items. Nothing is written on any error.
 * The transaction's statements go straight to the driver (accept-sqlite.ts, accept-postgres.ts):
 * it is the hottest write of the service.
 */
export async function acceptTask(
  ctx: Context,
  caller: Caller,
  request: PreparedRequest,
  options: CreateOptions,
): Promise<Created> {
  // service://a/<id> references: assets of the caller's library meeting the acceptance limits; measured clip lengths reprice the hold.
  await applyAssetReferences(ctx, ownerOf(caller), request);
  // Values no route of the model can take: 400, whatever the deployments' health (docs/contracts.md, the refusal order).
  const notServed = inputNotServed(ctx, request);
  if (notServed) throw notServed;
  // Routed at submission (runtime/worker/submit.ts): here only whether any deployment serves the model and this input.
  if (!ctx.deployments.serves(request.model.info, request.input)) throw new ApiError('no_deployment');
  const acceptance: Acceptance = {
    ctx,
    caller,
    request,
    options,
    taskId: options.taskId ?? newOrderedId('task'),
    now: ctx.clock.now(),
  };
  const attempt = () => (ctx.db.engine === 'sqlite' ? acceptOnSqlite(acceptance) : acceptOnPostgres(acceptance));
  try {
    const created = await attempt();
    if (!created.replayed) {
      ctx.faults.reach('create.committed'); // committed, the client not yet answered
      ctx.wakeWorkers();
      await runAcceptedHooks(ctx, caller, created);
    }
    return created;
  } catch (error) {
    // Two requests raced on one Idempotency-Key: the loser replays the winner's task.
    if (options.idempotencyKey !== undefined && isUniqueViolation(error)) return attempt();
    throw error;
  }
}

/** The task is accepted whatever a hook does: a hook's failure is logged, never the request's answer. */
async function runAcceptedHooks(ctx: Context, caller: Caller, created: Created): Promise<void> {
  for (const hook of ctx.acceptedHooks) {
    try {
      await hook(ctx, caller, created.task);
    } catch (error) {
      ctx.log.error({ err: error, task: created.task.id }, 'after-acceptance hook failed');
    }
  }
}
