import type { Caller } from '../accounts/accounts.js';
import { purgeReferenceCopies } from '../assets/reference-copies.js';
import type { Context } from '../context.js';
import { ApiError } from '../errors.js';
import { endTaskWork } from '../queue/work-items.js';
import { decodeCursor, keysetAfter, pageOf } from '../storage/cursor.js';
import { preparedRead } from '../storage/prepared-read.js';
import { markContentPurged } from './content-purge.js';
import { inputUploadKeysOf } from './input-uploads.js';
import { isTerminal } from './states.js';
import type { StoredOutput, TaskRow } from './task-record.js';

/** Every recordInfo's read (and retry's, purge's, the files' and the compatible layer's): prepared, no query built per request. */
const taskOfKey = preparedRead<[taskId: string, keyId: string], TaskRow>(
  'task-of-key',
  'select * from "tasks" where "id" = ? and "api_key_id" = ?',
);

/** A task of the calling key. Unknown, another account's and a sibling key's tasks are the same 404. */
export async function taskOfCaller(ctx: Context, caller: Caller, taskId: unknown): Promise<TaskRow> {
  if (typeof taskId !== 'string' || taskId.length === 0 || taskId.length > 100)
    throw new ApiError('task_not_found', { param: 'taskId' });
  const row = await taskOfKey.first(ctx.db, taskId, caller.keyId);
  if (!row) throw new ApiError('task_not_found', { param: 'taskId' });
  return row;
}

export interface ListQuery {
  cursor?: string;
  limit: number;
  state?: string;
  model?: string;
}

/** The key's tasks, newest first, with an opaque cursor (created_at, id) for the next page. */
export async function listTasksOfCaller(
  ctx: Context,
  caller: Caller,
  query: ListQuery,
): Promise<{ rows: TaskRow[]; nextCursor: string | null }> {
  let q = ctx.db.kysely.selectFrom('tasks').selectAll().where('api_key_id', '=', caller.keyId);
  if (query.state) q = q.where('state', '=', query.state);
  if (query.model) q = q.where('model', '=', query.model);
  if (query.cursor) {
    const [createdAt, id] = decodeCursor(query.cursor);
    q = q.where((eb) => keysetAfter(eb, { createdAt, id }));
  }
  const rows = await q
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(query.limit + 1)
    .execute();
  return pageOf(rows, query.limit);
}

/**
 * Destroys a finished task's content (media objects, its uploaded input reference, result
 * payload, request text with the prompt, warnings quoting it) and keeps the billing evidence. Idempotent: the original purgedAt.
 */
export async function purgeTaskContent(ctx: Context, task: TaskRow): Promise<number> {
  if (!isTerminal(task.state)) throw new ApiError('task_not_finished', { param: 'taskId' });
  if (task.purged_at !== null) return task.purged_at;
  const now = ctx.clock.now();
  const outputs = task.output_json ? (JSON.parse(task.output_json) as StoredOutput[]) : [];
  // The objects go first: once purgedAt is visible, no link to them answers any more. A failure or a
  // crash in between leaves the task unpurged with some objects gone, and the purge (idempotent:
  // deleting a missing object is no error) is retried by its work item or by the caller.
  for (const output of outputs) await ctx.blobs.delete(output.key);
  // The uploaded reference of a /v1/videos request goes with the task (its signed link then 404s).
  for (const key of inputUploadKeysOf(task)) await ctx.blobs.delete(key);
  // The service's copies of its external references (issue 37 point 3) go with it too.
  await purgeReferenceCopies(ctx, task.id);
  const purgedAt = await ctx.db.kysely.transaction().execute(async (trx) => {
    const purged = await markContentPurged(trx, task.id, now);
    await endTaskWork(trx, task.id, ['purge'], now);
    if (!purged) {
      const row = await trx.selectFrom('tasks').select('purged_at').where('id', '=', task.id).executeTakeFirstOrThrow();
      return row.purged_at!;
    }
    // Stored webhook bodies quote the task record: its request text and output go too.
    const deliveries = await trx
      .selectFrom('webhook_deliveries')
      .select(['id', 'body'])
      .where('task_id', '=', task.id)
      .execute();
    for (const delivery of deliveries) {
      await trx
        .updateTable('webhook_deliveries')
        .set({ body: scrubDeliveryBody(delivery.body, now) })
        .where('id', '=', delivery.id)
        .execute();
    }
    return now;
  });
  return purgedAt;
}

/** A task record inside a stored delivery body, with the purged content removed (billing fields stay). */
function scrubRecord(record: Record<string, unknown> | undefined, purgedAt: number): void {
  if (!record || typeof record !== 'object') return;
  record.input = null;
  record.output = null;
  record.warnings = [];
  record.purgedAt = new Date(purgedAt).toISOString();
}

/** Callback bodies carry the record in `data`; account-endpoint events in `data.object`. */
function scrubDeliveryBody(body: string, purgedAt: number): string {
  const parsed = JSON.parse(body) as { data?: Record<string, unknown> & { object?: Record<string, unknown> } };
  if (parsed.data?.object) scrubRecord(parsed.data.object, purgedAt);
  else scrubRecord(parsed.data, purgedAt);
  return JSON.stringify(parsed);
}
