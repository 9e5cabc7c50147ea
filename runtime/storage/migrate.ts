import { Migrator, type Migration, type MigrationResultSet } from 'kysely';
import type { Db } from './dialect.js';
import { initial } from './migrations/0001-initial.js';
import { webhooks } from './migrations/0002-webhooks.js';

/** Versioned migrations, in order; each name is recorded once applied. */
function migrations(db: Db): Record<string, Migration> {
  return { '0001-initial': initial(db.engine), '0002-webhooks': webhooks(db.engine) };
}

function migrator(db: Db): Migrator {
  return new Migrator({ db: db.kysely, provider: { getMigrations: async () => migrations(db) } });
}

export async function migrateToLatest(db: Db): Promise<{ applied: string[] }> {
  const result: MigrationResultSet = await migrator(db).migrateToLatest();
  if (result.error) throw result.error;
  return { applied: (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
}

/** Names of migrations not yet applied: serve refuses to start while any remain. */
export async function pendingMigrations(db: Db): Promise<string[]> {
  const all = await migrator(db).getMigrations();
  return all.filter((m) => m.executedAt === undefined).map((m) => m.name);
}
