import type { Context } from '../context.js';
import { expireUploads } from '../files/cleanup.js';
import { scheduleWork } from './schedule-work.js';
import type { WorkHandler } from './worker.js';

const HOUR_MS = 3600 * 1000;

/** Deletes Idempotency-Key rows past their 24 hours, then schedules itself again. */
const expireIdempotencyKeys: WorkHandler = async (ctx) => {
  const now = ctx.clock.now();
  await ctx.db.kysely.deleteFrom('idempotency_keys').where('expires_at', '<', now).execute();
  return { retryAt: now + HOUR_MS };
};

export const maintenanceWorkHandlers: Record<string, WorkHandler> = {
  'expire-idempotency-keys': expireIdempotencyKeys,
  'expire-uploads': expireUploads,
};

/** Makes sure each recurring maintenance job has one pending work item (any worker may run it). */
export async function scheduleMaintenance(ctx: Context): Promise<void> {
  const now = ctx.clock.now();
  for (const kind of Object.keys(maintenanceWorkHandlers)) {
    const pending = await ctx.db.kysely
      .selectFrom('work_items')
      .select('id')
      .where('kind', '=', kind)
      .where('done_at', 'is', null)
      .executeTakeFirst();
    if (!pending) {
      await scheduleWork(ctx.db.kysely, now, { kind, dueAt: now });
    }
  }
}
