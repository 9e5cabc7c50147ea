import type { Kysely } from 'kysely';
import { bigint, type Engine } from '../dialect.js';

/**
 * Upstream health from evidence, not from one customer (issue 37; runtime/routing/evidence.ts):
 * - upstream_evidence: one row per deployment and task that failed a call to it, with the task's
 *   owner (the console user behind the account, or the account itself) and whether that owner's
 *   evidence counts for everyone (a paying, non-playground account). A task counts at most once
 *   per window however often it is retried, re-sent or polled: its row is refreshed only once the
 *   window has passed.
 * - upstream_owner_cooldowns: a cool-down of one owner on one deployment: that owner's tasks fail
 *   over or fail fast there, and nobody else notices.
 * - upstream_health.tripped_at: when the deployment last cooled for everyone (null: not tripped);
 *   trips: cool-downs in a row without a recovery (two or more: `down`); trial_until: a trial
 *   call in progress (half-open, one at a time); probed_at, probe_outcome and probe_detail: its
 *   last probe (kept apart from the last failed call, which stays the customers' evidence).
 */
export function upstreamEvidence(engine: Engine) {
  const int = bigint(engine);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('upstream_evidence')
        .addColumn('deployment', 'text', (c) => c.notNull())
        .addColumn('task_id', 'text', (c) => c.notNull())
        .addColumn('owner_id', 'text', (c) => c.notNull())
        .addColumn('counts_globally', 'integer', (c) => c.notNull())
        .addColumn('failure_class', 'text', (c) => c.notNull())
        .addColumn('failed_at', int, (c) => c.notNull())
        .addPrimaryKeyConstraint('upstream_evidence_pk', ['deployment', 'task_id'])
        .execute();
      await db.schema
        .createIndex('upstream_evidence_recent')
        .on('upstream_evidence')
        .columns(['deployment', 'failed_at'])
        .execute();
      await db.schema
        .createTable('upstream_owner_cooldowns')
        .addColumn('deployment', 'text', (c) => c.notNull())
        .addColumn('owner_id', 'text', (c) => c.notNull())
        .addColumn('until', int, (c) => c.notNull())
        .addPrimaryKeyConstraint('upstream_owner_cooldowns_pk', ['deployment', 'owner_id'])
        .execute();
      await db.schema.alterTable('upstream_health').addColumn('tripped_at', int).execute();
      await db.schema
        .alterTable('upstream_health')
        .addColumn('trips', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable('upstream_health').addColumn('trial_until', int).execute();
      await db.schema.alterTable('upstream_health').addColumn('probed_at', int).execute();
      await db.schema.alterTable('upstream_health').addColumn('probe_outcome', 'text').execute();
      await db.schema.alterTable('upstream_health').addColumn('probe_detail', 'text').execute();
    },
  };
}
