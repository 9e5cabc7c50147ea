import type { Kysely } from 'kysely';
import { bigint, type Engine } from '../dialect.js';

/**
 * Real upstream providers (runtime/deployments/):
 * - tasks.deployment (which existed) is now written when the task is submitted, not when it is
 *   created: a task holds a slot of its deployment from then until it ends (maxInFlight counts
 *   `deployment = name AND state IN (queued, running)`, hence the index); deployment_handle is the
 *   upstream's id. Together they pin every later poll, download, cancel and callback.
 * - tasks.upstream_cost_micros: what the operator pays the upstream for the task (millionths of a
 *   USD, from the deployment's declared cost), for the margin report.
 * - upstream_health: one row per deployment that has been submitted to: consecutive submit
 *   failures and the cool-down they caused, shared by every process; the row is also the lock
 *   that makes the in-flight count and the slot it grants one step.
 * - upstream_counters: submits, failures by class and poll latency buckets per deployment, added
 *   to by every worker process (runtime/routing/upstream-stats.ts), read by /metrics.
 */
export function upstreams(engine: Engine) {
  const int = bigint(engine);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('tasks').addColumn('upstream_cost_micros', int).execute();
      await db.schema.createIndex('tasks_in_flight').on('tasks').columns(['deployment', 'state']).execute();
      await db.schema
        .createTable('upstream_health')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('cooldown_until', int)
        .addColumn('last_failure', 'text')
        .addColumn('last_failure_at', int)
        .addColumn('updated_at', int, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('upstream_counters')
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('counter', 'text', (c) => c.notNull())
        .addColumn('value', int, (c) => c.notNull())
        .addPrimaryKeyConstraint('upstream_counters_pk', ['name', 'counter'])
        .execute();
    },
  };
}
