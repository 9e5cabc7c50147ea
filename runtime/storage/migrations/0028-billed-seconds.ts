import type { Kysely } from 'kysely';

/**
 * tasks.billed_seconds (issue 39, the usage export): the billable seconds the settlement priced
 * (catalogue-core/price.ts `billableSeconds`), kept so an export reports what was billed without
 * pricing the task again. Null for tasks settled before it and for tasks not charged.
 */
export function billedSeconds() {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('tasks').addColumn('billed_seconds', 'integer').execute();
    },
  };
}
