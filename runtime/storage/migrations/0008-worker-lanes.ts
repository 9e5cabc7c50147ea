import { sql, type Kysely } from 'kysely';

/**
 * Indexes for the worker's lanes (runtime/worker/claim.ts), the same statements on both engines:
 * - work_leased: each claim counts the accounts' items under a lease; by lease end it reads those
 *   few items instead of the whole backlog (finished and waiting items have no lease end);
 * - work_due_by_kind, unfinished items only: a lane that names its kinds (checks, deliveries)
 *   finds its next due items directly, instead of walking the task lane's backlog to skip it.
 */
export function workerLanes() {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.createIndex('work_leased').on('work_items').column('lease_until').execute();
      await db.schema
        .createIndex('work_due_by_kind')
        .on('work_items')
        .columns(['kind', 'due_at'])
        .where(sql.ref('done_at'), 'is', null)
        .execute();
    },
  };
}
