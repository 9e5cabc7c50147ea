import { Migrator, sql, type Migration, type MigrationResultSet } from 'kysely';
import type { Db } from './dialect.js';
import { initial } from './migrations/0001-initial.js';
import { webhooks } from './migrations/0002-webhooks.js';
import { blobs } from './migrations/0003-blobs.js';
import { assets } from './migrations/0004-assets.js';
import { consoleUsers } from './migrations/0005-console.js';

/** Versioned migrations, in order; each name is recorded once applied. */
function migrations(db: Db): Record<string, Migration> {
  return { '0001-initial': initial(db.engine), '0002-webhooks': webhooks(db.engine), '0003-blobs': blobs(db.engine), '0004-assets': assets(db.engine), '0005-console': consoleUsers(db.engine) };
}

/**
 * On PostgreSQL the migration tables live in the connection's current schema, named explicitly:
 * left open, Kysely would find another schema's tables of the same name and look in the wrong one.
 */
async function migrator(db: Db): Promise<Migrator> {
  const schema = db.engine === 'postgres' ? (await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(db.kysely)).rows[0].schema : undefined;
  return new Migrator({ db: db.kysely, migrationTableSchema: schema, provider: { getMigrations: async () => migrations(db) } });
}

/**
 * Kysely looks for its migration tables by reading the whole PostgreSQL catalog, every schema of
 * the database; a schema dropped by someone else at that moment fails the read ("schema ... does
 * not exist", code 3F000, or a relation gone: 42P01). Nothing was migrated yet, so read again.
 */
async function withCatalogRetry<T>(db: Db, run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (db.engine !== 'postgres' || attempt >= 3 || (code !== '3F000' && code !== '42P01')) throw error;
    }
  }
}

export async function migrateToLatest(db: Db): Promise<{ applied: string[] }> {
  return withCatalogRetry(db, async () => {
    const result: MigrationResultSet = await (await migrator(db)).migrateToLatest();
    if (result.error) throw result.error;
    return { applied: (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
  });
}

/** Names of migrations not yet applied: serve refuses to start while any remain. */
export async function pendingMigrations(db: Db): Promise<string[]> {
  const all = await withCatalogRetry(db, async () => (await migrator(db)).getMigrations());
  return all.filter((m) => m.executedAt === undefined).map((m) => m.name);
}
