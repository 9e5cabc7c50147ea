import type { Caller } from '../accounts/accounts.js';
import type { Context } from '../context.js';
import { ApiError } from '../errors.js';
import type { Database } from '../storage/schema.js';
import type { NewWork } from '../queue/schedule-work.js';
import type { PreparedRequest } from './prepare-request.js';
import type { TaskRow } from './task-record.js';

/**
 * What createTask's one transaction writes, engine aside: the Idempotency-Key row, the task row and
 * its first work items, built once here; accept-sqlite.ts and accept-postgres.ts write them.
 */

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

/** One createTask request on its way into the database. */
/**
 * Work done right after a new task's acceptance has committed (the alerts of webhooks/alerts.ts:
 * a hold may have crossed a line). Handed to the service like the resolution hooks; a replay runs none.
 */
export type AcceptedHook = (ctx: Context, caller: Caller, task: TaskRow) => Promise<void>;

export interface Acceptance {
  ctx: Context;
  caller: Caller;
  request: PreparedRequest;
  options: CreateOptions;
  taskId: string;
  now: number;
}

export type IdempotencyRow = Database['idempotency_keys'];

export function idempotencyRow(a: Acceptance, key: string): IdempotencyRow {
  return {
    account_id: a.caller.accountId,
    scope: a.options.idempotencyScope,
    key,
    api_key_id: a.caller.keyId,
    fingerprint: a.request.fingerprint,
    task_id: a.taskId,
    created_at: a.now,
    expires_at: a.now + IDEMPOTENCY_WINDOW_MS,
  };
}

/**
 * An unexpired row of the key: the task to replay. Same key from a sibling API key: 409 40903
 * with no task id; same key, different request: 409 40902.
 */
export function replayedTaskId(existing: IdempotencyRow, a: Acceptance): string {
  if (existing.api_key_id !== a.caller.keyId) throw new ApiError('idempotency_other_key', { param: 'Idempotency-Key' });
  if (existing.fingerprint !== a.request.fingerprint)
    throw new ApiError('idempotency_mismatch', { param: 'Idempotency-Key' });
  return existing.task_id;
}

export function insufficientCredits(a: Acceptance, available: number): ApiError {
  return new ApiError('insufficient_credits', { params: { required: a.request.price.maxCredits, available } });
}

export function newTaskRow({ ctx, caller, request, options, taskId, now }: Acceptance): TaskRow {
  return {
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
    billed_seconds: null,
    settled: 0,
    error_code: null,
    error_message: null,
    output_json: null,
    warnings_json: JSON.stringify(request.warnings),
    deployment: null,
    deployment_handle: null,
    upstream_cost_micros: null,
    reference_clip_seconds_json: null,
    upstream_callback_at: null,
    upstream_final_state: null,
    first_submit_at: null,
    unknown_submit_at: null,
    unknown_submit_cost_micros: null,
    retry_of: options.retryOf ?? null,
    retention_seconds: options.retentionSeconds ?? null,
    price_book: request.priceBook,
    created_at: now,
    updated_at: now,
    started_at: null,
    finished_at: null,
    deadline_at: now + ctx.config.taskDeadlineMs,
    purged_at: null,
  };
}

/** Every column of the tasks table, in the order the direct insert binds them. */
export const TASK_COLUMNS = [
  'id',
  'account_id',
  'api_key_id',
  'model',
  'state',
  'input_json',
  'callback_url',
  'request_id',
  'progress',
  'estimated_credits',
  'max_credits',
  'charged_credits',
  'billed_seconds',
  'settled',
  'error_code',
  'error_message',
  'output_json',
  'warnings_json',
  'deployment',
  'deployment_handle',
  'upstream_cost_micros',
  'reference_clip_seconds_json',
  'upstream_callback_at',
  'upstream_final_state',
  'first_submit_at',
  'unknown_submit_at',
  'unknown_submit_cost_micros',
  'retry_of',
  'retention_seconds',
  'price_book',
  'created_at',
  'updated_at',
  'started_at',
  'finished_at',
  'deadline_at',
  'purged_at',
] as const satisfies readonly (keyof TaskRow)[];
/** A column added to the table and not to the list above fails to compile here. */
export const TASK_COLUMNS_COMPLETE: Exclude<keyof TaskRow, (typeof TASK_COLUMNS)[number]> extends never ? true : never =
  true;

/** A new task's work: run it now, expire it at its deadline. */
export function firstWork(task: TaskRow): NewWork[] {
  return [
    { kind: 'run', taskId: task.id, dueAt: task.created_at },
    { kind: 'expire', taskId: task.id, dueAt: task.deadline_at },
  ];
}
