import type { Context } from '../context.js';
import type { WorkItem } from './claim.js';
import { scheduleWork } from './schedule-work.js';
import type { NewWork, WorkKind, WorkPayloads } from './work-kinds.js';

/** The item that continues a handed-over item's work: a kind and its payload, the task being the item's. */
export type NextWork = { [K in WorkKind]: { kind: K } & Omit<WorkPayloads[K], 'taskId'> }[WorkKind];

/**
 * Ends a leased item and writes the item that continues its work (another kind, so another lane),
 * in one transaction: the next item exists once, whatever crashes. The end is guarded by the
 * lease, so when a lease ran out and another worker took the item over, only the first of the two
 * to commit writes the next item; the other writes nothing. Returns whether this one did.
 */
export async function handOver(ctx: Context, item: WorkItem, next: NextWork): Promise<boolean> {
  const now = ctx.clock.now();
  const handed = await ctx.db.kysely.transaction().execute(async (trx) => {
    const ended = await trx
      .updateTable('work_items')
      .set({ done_at: now, lease_until: null })
      .where('id', '=', item.id)
      .where('lease_owner', '=', item.lease_owner)
      .where('done_at', 'is', null)
      .executeTakeFirst();
    if (Number(ended.numUpdatedRows) !== 1) return false;
    await scheduleWork(trx, now, { ...next, taskId: item.task_id, dueAt: now } as NewWork);
    return true;
  });
  // Wakes this process's lanes at once (the ending item wakes them too) and, on PostgreSQL, other processes' workers.
  if (handed) ctx.wakeWorkers();
  return handed;
}
