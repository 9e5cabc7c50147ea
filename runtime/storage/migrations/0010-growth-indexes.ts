import { sql, type Kysely } from 'kysely';

/**
 * Indexes for reads that otherwise walk a table growing with every task (bench/growth.ts and
 * bench/plans.ts, measured on 1,000,000 finished tasks), the same statements on both engines:
 * - idempotency_keys_by_expiry: the hourly deletion of keys past their 24 hours read every key row
 *   (120-200 ms on SQLite, the event loop stopped meanwhile); now only the expired ones.
 * - tasks_by_key_state, tasks_by_key_model: the key's listing filtered by state or model walked every
 *   task of the key to find a rare one (460 ms); now a page is read from where it starts.
 * - tasks_by_account: the console's recent tasks and usage are per account (both of a user's
 *   accounts), and no index began with the account (765 ms for the 100 newest).
 * - work_pending replaces work_due (done_at, due_at): the unfinished items only, by due time. Every
 *   finished task leaves its done items behind; PostgreSQL did not read an order by due_at out of
 *   `done_at IS NULL` on the old index and sorted a sequential scan of all 4,000,000 items instead
 *   (the task lane's claim 1.8 s, its next-due read 0.7 s, the queue-lag gauge 0.5 s; now 0.3, 0.1
 *   and 0.1 ms). On SQLite both plans were ranges already; the index is a quarter of the size, and
 *   an item marked done leaves it instead of moving in it.
 */
export function growthIndexes() {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.createIndex('idempotency_keys_by_expiry').on('idempotency_keys').column('expires_at').execute();
      await db.schema
        .createIndex('tasks_by_key_state')
        .on('tasks')
        .columns(['api_key_id', 'state', 'created_at', 'id'])
        .execute();
      await db.schema
        .createIndex('tasks_by_key_model')
        .on('tasks')
        .columns(['api_key_id', 'model', 'created_at', 'id'])
        .execute();
      await db.schema.createIndex('tasks_by_account').on('tasks').columns(['account_id', 'created_at', 'id']).execute();
      await db.schema
        .createIndex('work_pending')
        .on('work_items')
        .column('due_at')
        .where(sql.ref('done_at'), 'is', null)
        .execute();
      await db.schema.dropIndex('work_due').execute();
    },
  };
}
