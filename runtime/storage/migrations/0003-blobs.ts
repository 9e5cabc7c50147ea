import { sql, type Kysely } from 'kysely';
import { bigint, type Engine } from '../dialect.js';

/** Media objects in the database: the blob store that several machines can share. */
export function blobs(engine: Engine) {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('blobs')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('bytes', engine === 'postgres' ? sql`bytea` : sql`blob`, (c) => c.notNull())
        .addColumn('size', bigint(engine), (c) => c.notNull())
        .addColumn('created_at', bigint(engine), (c) => c.notNull())
        .execute();
    },
  };
}
