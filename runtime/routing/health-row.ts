import type { Selectable } from 'kysely';
import type { Context } from '../context.js';
import type { Executor } from '../storage/executor.js';
import type { Database } from '../storage/schema.js';

/**
 * A deployment's row of upstream_health: reading it, creating it at first use, and its recovery.
 * Shared by the states and calls (./health.ts) and the probe (./probe-health.ts), which both
 * write it.
 */

/** Cool-downs for everyone in a row, without a recovery between them, that make a deployment `down`. */
export const DOWN_AFTER_TRIPS = 2;

/** A deployment's row of upstream_health as read. */
export type HealthRow = Selectable<Database['upstream_health']>;

/** The deployments' rows of upstream_health, by name. */
export async function healthRows(db: Executor, names: readonly string[]): Promise<Map<string, HealthRow>> {
  if (names.length === 0) return new Map<string, HealthRow>();
  const rows = await db
    .selectFrom('upstream_health')
    .selectAll()
    .where('name', 'in', [...names])
    .execute();
  return new Map(rows.map((r) => [r.name, r]));
}

/** The deployment's row, created at its first use (so that it can be locked). */
export async function ensureRow(db: Executor, name: string, now: number): Promise<void> {
  await db
    .insertInto('upstream_health')
    .values({
      name,
      consecutive_failures: 0,
      cooldown_until: null,
      last_failure: null,
      last_failure_at: null,
      last_failure_class: null,
      tripped_at: null,
      trial_until: null,
      probed_at: null,
      probe_outcome: null,
      probe_detail: null,
      updated_at: now,
    })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
}

/** The deployment answered a trial call or its probe: it recovers for everyone (logged once). */
export async function recover(ctx: Context, name: string, by: 'trial call' | 'probe'): Promise<void> {
  const now = ctx.clock.now();
  const result = await ctx.db.kysely
    .updateTable('upstream_health')
    .set({
      tripped_at: null,
      trips: 0,
      cooldown_until: null,
      trial_until: null,
      consecutive_failures: 0,
      updated_at: now,
    })
    .where('name', '=', name)
    .where('tripped_at', 'is not', null)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 1)
    ctx.log.info({ deployment: name }, `deployment ${name} answered its ${by}: recovered`);
}
