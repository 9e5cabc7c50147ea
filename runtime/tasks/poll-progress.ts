import type { Db } from '../storage/dialect.js';
import { preparedWrite } from '../storage/prepared-write.js';

const PROGRESS = preparedWrite<[progress: number, now: number, taskId: string]>(
  'poll-progress',
  `update "tasks" set "progress" = ?, "updated_at" = ? where "id" = ? and "state" = 'running'`,
);

/** A running task's progress as its deployment last reported it (a poll that found the job still running). */
export async function recordPollProgress(db: Db, taskId: string, progress: number, now: number): Promise<void> {
  await PROGRESS.run(db, progress, now, taskId);
}
