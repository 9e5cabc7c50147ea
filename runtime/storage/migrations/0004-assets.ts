import { sql, type Kysely } from 'kysely';
import { bigint, type Engine } from '../dialect.js';

/**
 * The private asset library: upload tickets (`uploads`), the assets themselves and the
 * characters built from them (`entities`). Owner of every row: the account plus the library
 * ('personal' or the key's workspace 'team:NAME').
 */
export function assets(engine: Engine) {
  const int = bigint(engine);
  const real = sql`double precision`;
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('uploads')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('library', 'text', (c) => c.notNull())
        .addColumn('api_key_id', 'text', (c) => c.notNull())
        .addColumn('file_name', 'text', (c) => c.notNull())
        .addColumn('content_type', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('declared_size', int, (c) => c.notNull())
        .addColumn('max_bytes', int, (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('received_bytes', int)
        .addColumn('blob_key', 'text')
        .addColumn('asset_id', 'text')
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('expires_at', int, (c) => c.notNull())
        .addColumn('uploaded_at', int)
        .execute();
      await db.schema
        .createTable('assets')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('library', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('mime', 'text', (c) => c.notNull())
        .addColumn('format', 'text', (c) => c.notNull())
        .addColumn('bytes', int, (c) => c.notNull())
        .addColumn('width', 'integer')
        .addColumn('height', 'integer')
        .addColumn('has_alpha', 'integer')
        .addColumn('duration_seconds', real)
        .addColumn('fps', real)
        .addColumn('blob_key', 'text', (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('source_task_id', 'text')
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('deleted_at', int)
        .execute();
      await db.schema
        .createIndex('assets_by_library')
        .on('assets')
        .columns(['account_id', 'library', 'created_at', 'id'])
        .execute();
      await db.schema
        .createTable('entities')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('library', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('asset_ids', 'text', (c) => c.notNull())
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('deleted_at', int)
        .execute();
      await db.schema
        .createIndex('entities_by_library')
        .on('entities')
        .columns(['account_id', 'library', 'created_at'])
        .execute();
    },
  };
}
