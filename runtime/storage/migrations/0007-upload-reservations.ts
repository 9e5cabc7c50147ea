import type { Kysely } from 'kysely';

/**
 * Upload tickets reserve their size against the library's plan: every ticket, commit, import and
 * usage report sums a library's open uploads, so they are found by library and state.
 */
export function uploadReservations() {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createIndex('uploads_by_library_state')
        .on('uploads')
        .columns(['account_id', 'library', 'state'])
        .execute();
    },
  };
}
