import type { Caller } from '../accounts/accounts.js';
import { ownerOf } from '../assets/library.js';
import { applyAssetReferences } from '../assets/references.js';
import type { Context } from '../context.js';
import { ApiError } from '../errors.js';
import { newId } from '../ids.js';
import { holdCredits } from '../ledger/ledger.js';
import { walletOf } from '../ledger/wallets.js';
import { isUniqueViolation } from '../storage/dialect.js';
import type { Trx } from '../storage/executor.js';
import type { PreparedRequest } from './prepare-request.js';
import type { TaskRow } from './task-record.js';
import { scheduleWork } from '../worker/schedule-work.js';

export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;

export interface CreateOptions {
  requestId: string;
  idempotencyKey?: string;
  /** 'create', or 'retry:<source task id>' for retries. */
  idempotencyScope: string;
  retentionSeconds?: number;
  retryOf?: string;
  /** The new task's id, chosen beforehand (the compatible layer stores the task's upload under it); a fresh one otherwise. */
  taskId?: string;
  /** Checks that apply to a new task only, not to a replay (a quote sent with the request). */
  beforeHold?: () => void;
}

export interface Created {
  task: TaskRow;
  replayed: boolean;
}

/**
 * Accepts a prepared request: in one transaction the Idempotency-Key row (or a replay), the hold
 * of maxCredits, the task in `queued` and its first work items. Nothing is written on any error.
 */
export async function acceptTask(
  ctx: Context,
  caller: Caller,
  request: PreparedRequest,
  options: CreateOptions,
): Promise<Created> {
  // service://a/<id> references: assets of the caller's library meeting the acceptance limits; measured clip lengths reprice the hold.
  await applyAssetReferences(ctx, ownerOf(caller), request);
  // Routed at submission (runtime/worker/submit.ts): here only whether any deployment serves the model and this input.
  if (!ctx.deployments.serves(request.model.info, request.input)) throw new ApiError('no_deployment');
  const now = ctx.clock.now();
  const taskId = options.taskId ?? newId('task');
  const attempt = () =>
    ctx.db.kysely.transaction().execute(async (trx): Promise<Created> => {
      if (options.idempotencyKey !== undefined) {
        const replay = await claimIdempotencyKey(trx, caller, request.fingerprint, options, taskId, now);
        if (replay) return { task: replay, replayed: true };
        ctx.faults.reach('create.idempotency-row');
      }
      options.beforeHold?.();
      const held = await holdCredits(trx, caller.accountId, taskId, request.price.maxCredits, now);
      if (!held) {
        const wallet = await walletOf(trx, caller.accountId);
        throw new ApiError('insufficient_credits', { required: request.price.maxCredits, available: wallet.available });
      }
      ctx.faults.reach('create.hold');
      const task: TaskRow = {
        id: taskId,
        account_id: caller.accountId,
        api_key_id: caller.keyId,
        model: request.model.info.id,
        state: 'queued',
        input_json: JSON.stringify(request.input),
        callback_url: request.callbackUrl,
        request_id: options.requestId,
        progress: 0,
        estimated_credits: request.price.estimatedCredits,
        max_credits: request.price.maxCredits,
        charged_credits: null,
        settled: 0,
        error_code: null,
        error_message: null,
        output_json: null,
        warnings_json: JSON.stringify(request.warnings),
        deployment: null,
        deployment_handle: null,
        upstream_cost_micros: null,
        retry_of: options.retryOf ?? null,
        retention_seconds: options.retentionSeconds ?? null,
        created_at: now,
        updated_at: now,
        started_at: null,
        finished_at: null,
        deadline_at: now + ctx.config.taskDeadlineMs,
        purged_at: null,
      };
      await trx.insertInto('tasks').values(task).execute();
      ctx.faults.reach('create.task-row');
      await scheduleWork(
        trx,
        now,
        { kind: 'run', taskId, dueAt: now },
        { kind: 'expire', taskId, dueAt: task.deadline_at },
      );
      ctx.faults.reach('create.work-items'); // the last statement before COMMIT: everything above rolls back
      return { task, replayed: false };
    });
  try {
    const created = await attempt();
    if (!created.replayed) {
      ctx.faults.reach('create.committed'); // committed, the client not yet answered
      ctx.wakeWorkers();
    }
    return created;
  } catch (error) {
    // Two requests raced on one Idempotency-Key: the loser replays the winner's task.
    if (options.idempotencyKey !== undefined && isUniqueViolation(error)) return attempt();
    throw error;
  }
}

/**
 * Records the key, or returns the task of an earlier request with it. Same key from a sibling
 * API key: 409 40903 with no task id; same key, different request: 409 40902.
 */
async function claimIdempotencyKey(
  trx: Trx,
  caller: Caller,
  fingerprint: string,
  options: CreateOptions,
  taskId: string,
  now: number,
): Promise<TaskRow | undefined> {
  const key = { account_id: caller.accountId, scope: options.idempotencyScope, key: options.idempotencyKey! };
  const existing = await trx
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('account_id', '=', key.account_id)
    .where('scope', '=', key.scope)
    .where('key', '=', key.key)
    .executeTakeFirst();
  if (existing && existing.expires_at > now) {
    if (existing.api_key_id !== caller.keyId) throw new ApiError('idempotency_other_key', {}, [], 'Idempotency-Key');
    if (existing.fingerprint !== fingerprint) throw new ApiError('idempotency_mismatch', {}, [], 'Idempotency-Key');
    return trx.selectFrom('tasks').selectAll().where('id', '=', existing.task_id).executeTakeFirstOrThrow();
  }
  if (existing) {
    await trx
      .deleteFrom('idempotency_keys')
      .where('account_id', '=', key.account_id)
      .where('scope', '=', key.scope)
      .where('key', '=', key.key)
      .execute();
  }
  await trx
    .insertInto('idempotency_keys')
    .values({
      ...key,
      api_key_id: caller.keyId,
      fingerprint,
      task_id: taskId,
      created_at: now,
      expires_at: now + IDEMPOTENCY_WINDOW_MS,
    })
    .execute();
  return undefined;
}
