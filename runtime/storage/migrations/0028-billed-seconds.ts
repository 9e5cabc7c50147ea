import type { Kysely } from 'kysely';

/**
 * tasks.billed_seconds (issue 39, the usage export): the billable seconds the settlement priced
 * (catalogue-core/price.ts `billableSeconds`), kept so an export reports what was billed without
 * pricing the task again. Null for tasks settled before it and for tasks not charged. And
 * tasks_by_finish: the export reads tasks page by page after (finished_at, id); without the index
 * each page scanned the table (1,000,000 tasks: still running after 6 minutes, bench/usage-export.ts).
 */
export function billedSeconds() {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('tasks').addColumn('billed_seconds', 'integer').execute();
      await db.schema.createIndex('tasks_by_finish').on('tasks').columns(['finished_at', 'id']).execute();
    },
  };
}
