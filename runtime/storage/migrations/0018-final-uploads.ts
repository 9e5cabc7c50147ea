import { type Kysely, sql } from 'kysely';

/**
 * Final uploads and once-only credits (issue 37):
 * - uploads.blob_key of a committed upload now names the ticket's object, deleted at the commit and
 *   once more after the ticket expired (runtime/files/cleanup.ts); the asset has its own key. Rows
 *   committed before held the asset's key there: cleared, so that the cleanup never deletes an asset.
 * - ledger_entries.reference: the idempotency key of a purchase row (an operator's "add credits",
 *   later a payment's id), unique per account, so the same top-up applied twice is one row. Null
 *   (every other row) is never equal to another null in a unique index, on either engine.
 */
export function finalUploads() {
  return {
    async up(db: Kysely<unknown>) {
      await sql`UPDATE uploads SET blob_key = NULL WHERE state = 'committed'`.execute(db);
      await db.schema.alterTable('ledger_entries').addColumn('reference', 'text').execute();
      await db.schema
        .createIndex('ledger_entries_reference')
        .on('ledger_entries')
        .columns(['account_id', 'reference'])
        .unique()
        .execute();
    },
  };
}
