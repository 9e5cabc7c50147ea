import type { Kysely } from 'kysely';

/**
 * tasks.upstream_final_state: how the upstream job of a task that ended while the job may still
 * have run (expired, canceled, a poll that gave up) ended in the end, learned by the slow polls of
 * reconciliation (runtime/worker/reconcile.ts): succeeded, failed, canceled, lost (the upstream no
 * longer knows it) or unresolved (still not ended at the horizon). Null: not reconciled (none
 * needed, or not yet known). Issue 27.
 */
export function upstreamReconcile() {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('tasks').addColumn('upstream_final_state', 'text').execute();
    },
  };
}
