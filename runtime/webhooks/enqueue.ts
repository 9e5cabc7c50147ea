import type { Insertable } from 'kysely';
import type { Context } from '../context.js';
import { pickLanguage } from '../language.js';
import { newId } from '../ids.js';
import type { Trx } from '../storage/executor.js';
import type { Database } from '../storage/schema.js';
import { taskRecord, type TaskRecord, type TaskRow } from '../tasks/task-record.js';
import { scheduleWork } from '../queue/schedule-work.js';
import { eventFor } from './events.js';

type DeliveryRow = Insertable<Database['webhook_deliveries']>;

/**
 * Task callback body, payload version 2: exactly the envelope recordInfo returns for the task,
 * with `request_id` = the delivery id (stable across retries). `code` is 200 even for a failed task.
 */
export function callbackBodyV2(record: TaskRecord, deliveryId: string) {
  return { code: 200, msg: 'success', data: record, request_id: deliveryId };
}

/**
 * Payload version 1, kept for accounts set to it: the task id at top-level `task_id`, the state
 * beside it, the delivery id as `request_id` (the receiver's idempotency key, as in version 2) and
 * the same task record under `data`. No envelope `code`/`msg`.
 */
export function callbackBodyV1(record: TaskRecord, deliveryId: string) {
  return { task_id: record.taskId, state: record.state, request_id: deliveryId, data: record };
}

/** Account endpoint body: `{type, timestamp, data: {object}}` with the task record at event time. */
export function endpointBody(type: string, now: number, record: TaskRecord) {
  return { type, timestamp: new Date(now).toISOString(), data: { object: record } };
}

/**
 * The webhooks' resolution hook (one of the service's default hooks: runtime/service.ts).
 * Runs in the transaction that writes the task's terminal state: one row per delivery (the body
 * built once, in the account's language) and one `deliver` work item each, due now. Either all of
 * it commits with the terminal state or none of it does.
 */
/** The columns every new delivery starts with: pending, due now, never tried (task events and alerts alike). */
export function pendingDelivery(accountId: string, taskId: string, now: number) {
  return {
    account_id: accountId,
    task_id: taskId,
    state: 'pending' as const,
    attempts: 0,
    round_attempts: 0,
    next_attempt_at: now,
    last_attempt_at: null,
    last_status: null,
    last_error: null,
    created_at: now,
    delivered_at: null,
  };
}

export async function enqueueDeliveries(trx: Trx, task: TaskRow, now: number, ctx: Context): Promise<void> {
  const endpoints = await trx
    .selectFrom('webhook_endpoints')
    .select(['id', 'url', 'events'])
    .where('account_id', '=', task.account_id)
    .where('disabled_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  // A task nobody is told about reads nothing more (the account's language shapes the bodies only).
  if (!task.callback_url && endpoints.length === 0) return;
  const account = await trx
    .selectFrom('accounts')
    .select(['language', 'payload_version'])
    .where('id', '=', task.account_id)
    .executeTakeFirst();
  if (!account) return;
  const record = taskRecord(ctx, task, pickLanguage(undefined, account.language));
  const base = pendingDelivery(task.account_id, task.id, now);
  const rows: DeliveryRow[] = [];
  if (task.callback_url) {
    const id = newId('dlv');
    const version = account.payload_version === 1 ? 1 : 2;
    const body = version === 1 ? callbackBodyV1(record, id) : callbackBodyV2(record, id);
    rows.push({
      ...base,
      id,
      kind: 'callback',
      endpoint_id: null,
      event_type: `task.${task.state}`,
      url: task.callback_url,
      payload_version: version,
      body: JSON.stringify(body),
    });
  }
  for (const endpoint of endpoints) {
    const type = eventFor(endpoint.events.split(','), task.state);
    if (!type) continue;
    rows.push({
      ...base,
      id: newId('dlv'),
      kind: 'endpoint',
      endpoint_id: endpoint.id,
      event_type: type,
      url: endpoint.url,
      payload_version: 1,
      body: JSON.stringify(endpointBody(type, now, record)),
    });
  }
  if (rows.length === 0) return;
  await trx.insertInto('webhook_deliveries').values(rows).execute();
  await scheduleWork(
    trx,
    now,
    ...rows.map((row) => ({ kind: 'deliver' as const, taskId: task.id, refId: row.id, dueAt: now })),
  );
}
