import { sql, type Kysely } from 'kysely';
import { bigint, type Engine } from '../dialect.js';

/**
 * Media objects in the database, streamed: an object's bytes are rows of about 1 MiB in
 * `blob_chunks`, written under a fresh `chunk_set` id and made visible in one step by pointing the
 * `blobs` row at that set (so a half-written or refused object is never seen). Rows written
 * before this migration keep their bytes in `blobs.bytes` and `chunk_set` null.
 */
export function blobChunks(engine: Engine) {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('blob_chunks')
        .addColumn('chunk_set', 'text', (c) => c.notNull())
        .addColumn('seq', bigint(engine), (c) => c.notNull())
        .addColumn('bytes', engine === 'postgres' ? sql`bytea` : sql`blob`, (c) => c.notNull())
        .addPrimaryKeyConstraint('blob_chunks_pk', ['chunk_set', 'seq'])
        .execute();
      await db.schema.alterTable('blobs').addColumn('chunk_set', 'text').execute();
      // The sweep of abandoned sets looks objects up by set.
      await db.schema.createIndex('blobs_by_chunk_set').on('blobs').column('chunk_set').execute();
    },
  };
}
