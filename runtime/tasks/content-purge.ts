import type { Executor } from '../storage/executor.js';

/**
 * A finished task's content cleared (its request text with the prompt, result payload, callback
 * URL, warnings quoting it) and the time noted, once: false when it was purged before. The billing
 * evidence stays. Its objects are deleted first, by the caller (./task-queries.ts `purgeTaskContent`).
 */
export async function markContentPurged(db: Executor, taskId: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set({
      input_json: null,
      output_json: null,
      callback_url: null,
      warnings_json: '[]',
      purged_at: now,
      updated_at: now,
    })
    .where('id', '=', taskId)
    .where('purged_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
