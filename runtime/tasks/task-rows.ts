import type { Db } from '../storage/dialect.js';
import type { Executor } from '../storage/executor.js';
import { keysetAfter } from '../storage/cursor.js';
import { preparedRead } from '../storage/prepared-read.js';
import type { TaskRow } from './task-record.js';

/**
 * Reads of the tasks table for the rest of the runtime: routes, the console, the worker and the
 * adapters ask here rather than writing their own SELECT. Writes are tasks/' too, one function per
 * state change (docs/architecture.md, tasks/): acceptance, run start, poll progress, resolution,
 * purge, and the marks of submit-marks.ts and upstream-job-marks.ts.
 */

const taskRowById = preparedRead<[taskId: string], TaskRow>('task-by-id', 'select * from "tasks" where "id" = ?');

/** The task of a work item, read by the worker at least once per item: prepared, no query built per read. */
export async function taskById(db: Db, taskId: string): Promise<TaskRow | undefined> {
  return taskRowById.first(db, taskId);
}

/** A task that must exist (it was just written or read in this request). */
export async function existingTask(db: Executor, taskId: string): Promise<TaskRow> {
  return db.selectFrom('tasks').selectAll().where('id', '=', taskId).executeTakeFirstOrThrow();
}

export async function taskExists(db: Executor, taskId: string): Promise<boolean> {
  return (await db.selectFrom('tasks').select('id').where('id', '=', taskId).executeTakeFirst()) !== undefined;
}

/** A task of the API key, or undefined (another key's tasks are as unknown ones). */
export async function taskOfKey(db: Executor, keyId: string, taskId: string): Promise<TaskRow | undefined> {
  return db.selectFrom('tasks').selectAll().where('id', '=', taskId).where('api_key_id', '=', keyId).executeTakeFirst();
}

/** A task of the account, or undefined. */
export async function taskOfAccount(db: Executor, accountId: string, taskId: string): Promise<TaskRow | undefined> {
  return db
    .selectFrom('tasks')
    .selectAll()
    .where('id', '=', taskId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

export async function taskState(db: Executor, taskId: string): Promise<string | undefined> {
  return (await db.selectFrom('tasks').select('state').where('id', '=', taskId).executeTakeFirst())?.state;
}

/** Task counts by state (/metrics). */
export async function taskCountsByState(db: Executor): Promise<{ state: string; count: number }[]> {
  const rows = await db
    .selectFrom('tasks')
    .select(['state', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('state')
    .execute();
  return rows.map((row) => ({ state: row.state, count: Number(row.n) }));
}

/** What usage reports add up: each task's model, day, account and settled charge. */
export interface UsageRow {
  model: string;
  created_at: number;
  account_id: string;
  charged_credits: number | null;
  settled: number;
}

/** Tasks created in [from, to) by the API key, or (`accountIds`) by any key of those accounts. */
export async function usageRows(
  db: Executor,
  by: { keyId: string } | { accountIds: readonly string[] },
  from: number,
  to: number,
): Promise<UsageRow[]> {
  let q = db
    .selectFrom('tasks')
    .select(['model', 'created_at', 'account_id', 'charged_credits', 'settled'])
    .where('created_at', '>=', from)
    .where('created_at', '<', to);
  q = 'keyId' in by ? q.where('api_key_id', '=', by.keyId) : q.where('account_id', 'in', [...by.accountIds]);
  return q.execute();
}

/** The accounts' newest tasks, newest first. */
export async function recentTasksOfAccounts(db: Executor, accountIds: readonly string[], limit: number) {
  return db
    .selectFrom('tasks')
    .select([
      'id',
      'model',
      'state',
      'account_id',
      'charged_credits',
      'max_credits',
      'settled',
      'created_at',
      'error_code',
    ])
    .where('account_id', 'in', [...accountIds])
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/**
 * Up to `limit` tasks of the key in (created_at, id) order, after the task `afterId` when given.
 * Undefined when `afterId` is not a task of the key.
 */
export async function tasksOfKeyAfter(
  db: Executor,
  keyId: string,
  options: { afterId?: string; order: 'asc' | 'desc'; limit: number },
): Promise<TaskRow[] | undefined> {
  let q = db.selectFrom('tasks').selectAll().where('api_key_id', '=', keyId);
  if (options.afterId !== undefined) {
    const anchor =
      options.afterId.length > 0 && options.afterId.length <= 100
        ? await db
            .selectFrom('tasks')
            .select(['id', 'created_at'])
            .where('id', '=', options.afterId)
            .where('api_key_id', '=', keyId)
            .executeTakeFirst()
        : undefined;
    if (!anchor) return undefined;
    q = q.where((eb) => keysetAfter(eb, { createdAt: anchor.created_at, id: anchor.id }, options.order));
  }
  return q.orderBy('created_at', options.order).orderBy('id', options.order).limit(options.limit).execute();
}

/** The stored outputs (JSON) of the key's task, or null: a source clip's media for an adapter. */
export async function outputJsonOfKeyTask(db: Executor, keyId: string, taskId: string): Promise<string | null> {
  const row = await db
    .selectFrom('tasks')
    .select('output_json')
    .where('id', '=', taskId)
    .where('api_key_id', '=', keyId)
    .executeTakeFirst();
  return row?.output_json ?? null;
}

/** Tasks of the key queued or running: what a key's `maxInFlight` caps. */
export async function tasksInFlightOfKey(db: Executor, keyId: string): Promise<number> {
  const row = await db
    .selectFrom('tasks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('api_key_id', '=', keyId)
    .where('state', 'in', ['queued', 'running'])
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}
