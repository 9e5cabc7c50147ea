import type { Executor } from '../storage/executor.js';
import type { TaskRow } from './task-record.js';

/**
 * A resolution's write of the task (./resolve-task.ts): its terminal state and what goes with it,
 * only while the task is still queued or running. The state guard makes resolution happen once,
 * whoever gets there first: false when another did.
 */
export async function writeTerminalState(db: Executor, taskId: string, written: Partial<TaskRow>): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set(written)
    .where('id', '=', taskId)
    .where('state', 'in', ['queued', 'running'])
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
