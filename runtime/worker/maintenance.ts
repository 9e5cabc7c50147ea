import type { Context } from '../context.js';
import { expireUploads } from '../files/cleanup.js';
import { watchUpstreams } from '../routing/probe-health.js';
import { scheduleWork } from '../queue/schedule-work.js';
import type { WorkHandler, WorkHandlers } from '../queue/work-handler.js';
import type { WorkKind } from '../queue/work-kinds.js';
import { hasPendingWork } from '../queue/work-items.js';

const HOUR_MS = 3600 * 1000;

/** Rows deleted per statement: at about 50 µs a row on SQLite, each statement holds the event loop for a few tens of ms. */
const EXPIRY_BATCH = 500;

/**
 * Deletes Idempotency-Key rows past their 24 hours, then schedules itself again. An hour of keys of
 * a busy service is tens of thousands of rows: one statement deleting them all stopped every
 * request for 0.65 s on SQLite (12,500 rows, bench/growth.ts), so they go in small statements with
 * the event loop free in between (each row by its key, so the same statement runs on both engines).
 */
const expireIdempotencyKeys: WorkHandler = async (ctx) => {
  const now = ctx.clock.now();
  const db = ctx.db.kysely;
  for (;;) {
    const result = await db
      .deleteFrom('idempotency_keys')
      .where((eb) =>
        eb(
          eb.refTuple('account_id', 'scope', 'key'),
          'in',
          eb
            .selectFrom('idempotency_keys')
            .select(['account_id', 'scope', 'key'])
            .where('expires_at', '<', now)
            .limit(EXPIRY_BATCH)
            .$asTuple('account_id', 'scope', 'key'),
        ),
      )
      .executeTakeFirst();
    if (Number(result.numDeletedRows) < EXPIRY_BATCH) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { retryAt: now + HOUR_MS };
};

/** How often the worker asks the payment processor for paid sessions it was not told of. */
const PAYMENTS_RECONCILE_MS = 15 * 60 * 1000;

/**
 * Credits the paid Checkout Sessions of the last 48 hours whose webhook never came, by the webhook's
 * own exactly-once path (runtime/payments/payments.ts `reconcile`), then schedules itself again.
 * While payments are off the item only waits: settings change with a restart, not while it sleeps.
 */
const reconcilePayments: WorkHandler = async (ctx) => {
  const now = ctx.clock.now();
  if (ctx.payments) {
    const { seen, credited } = await ctx.payments.reconcile(now);
    if (credited > 0)
      ctx.log.info({ seen, credited }, 'payments reconciled: paid sessions credited without their webhook');
  }
  return { retryAt: now + PAYMENTS_RECONCILE_MS };
};

/** The recurring maintenance kinds, each with one pending item at a time. */
const MAINTENANCE_KINDS = [
  'expire-idempotency-keys',
  'expire-uploads',
  'watch-upstreams',
  'reconcile-payments',
] as const satisfies readonly WorkKind[];

export const maintenanceWorkHandlers = {
  'expire-idempotency-keys': expireIdempotencyKeys,
  'expire-uploads': expireUploads,
  'watch-upstreams': watchUpstreams,
  'reconcile-payments': reconcilePayments,
} satisfies Record<(typeof MAINTENANCE_KINDS)[number], WorkHandler> satisfies WorkHandlers;

/** Makes sure each recurring maintenance job has one pending work item (any worker may run it). */
export async function scheduleMaintenance(ctx: Context): Promise<void> {
  const now = ctx.clock.now();
  for (const kind of MAINTENANCE_KINDS) {
    if (!(await hasPendingWork(ctx.db.kysely, kind))) {
      await scheduleWork(ctx.db.kysely, now, { kind, dueAt: now });
    }
  }
}
