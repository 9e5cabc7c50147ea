import { wakeTaskPoll } from '../queue/work-items.js';
import type { Db } from '../storage/dialect.js';
import type { Executor } from '../storage/executor.js';
import { OPEN_STATES } from './states.js';

/**
 * What an upstream's callback did to its task:
 * - woken: the first callback of an open task, and its poll was waiting: the poll is due now;
 * - idle: the task is open but its poll is not waiting (under way, or already due): nothing to do,
 *   and the next callback may still wake it;
 * - replay: a callback woke this task's poll before: an upstream reports the end of a job once, so
 *   this one (the same again, or another post to the URL) is answered without a poll;
 * - ended: the task is no longer open on that deployment: its callback URL has expired.
 */
export type CallbackOutcome = 'woken' | 'idle' | 'replay' | 'ended';

/**
 * One callback of `deployment` for `taskId`, in one transaction: the task's row is read (locked on
 * PostgreSQL, so that two callbacks at once are one after the other), its poll made due only if
 * no callback did so before, and the time noted. The poll's answer stays the truth.
 */
export async function wakeOnUpstreamCallback(
  db: Db,
  taskId: string,
  deployment: string,
  now: number,
): Promise<CallbackOutcome> {
  return db.kysely.transaction().execute(async (trx) => {
    const task = await trx
      .selectFrom('tasks')
      .select('upstream_callback_at')
      .where('id', '=', taskId)
      .where('deployment', '=', deployment)
      .where('state', 'in', [...OPEN_STATES])
      .$if(db.engine === 'postgres', (q) => q.forUpdate())
      .executeTakeFirst();
    if (!task) return 'ended';
    if (task.upstream_callback_at !== null) return 'replay';
    if (!(await wakeTaskPoll(trx, taskId, now))) return 'idle';
    await noteCallbackWoke(trx, taskId, now);
    return 'woken';
  });
}

/** The time a callback made the task's poll due: later callbacks of the task are replays. */
async function noteCallbackWoke(db: Executor, taskId: string, now: number): Promise<void> {
  await db.updateTable('tasks').set({ upstream_callback_at: now }).where('id', '=', taskId).execute();
}
