import type { Executor } from '../storage/executor.js';

/** A running task's progress as its deployment last reported it (a poll that found the job still running). */
export async function recordPollProgress(db: Executor, taskId: string, progress: number, now: number): Promise<void> {
  await db
    .updateTable('tasks')
    .set({ progress, updated_at: now })
    .where('id', '=', taskId)
    .where('state', '=', 'running')
    .execute();
}
