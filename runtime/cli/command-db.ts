/**
 * The database of a console command: --db, else MEDIAFORGE_DB, else the embedded default
 * (sqlite:./data/mediaforge.db). A SQLite database is migrated on the spot, as `npm start` does,
 * so a first command run before the service never meets a missing table; a PostgreSQL database is
 * migrated by its operator (`mediaforge migrate`), and a command on an unmigrated one says so.
 */
import { configFromEnv, processEnvironment, type Config } from '../config.js';
import type { Db } from '../storage/dialect.js';
import { openServiceDb } from '../storage/open-service-db.js';
import { migrateToLatest, pendingMigrations } from '../storage/migrate.js';

export function commandConfig(values: { db?: string | boolean | undefined }): Config {
  return configFromEnv(processEnvironment({ MEDIAFORGE_DB: typeof values.db === 'string' ? values.db : undefined }));
}

/** Opens the database with its schema current, runs `use`, and closes it. */
export async function withCommandDb<T>(
  config: Config,
  use: (db: Db) => Promise<T>,
  options: { migrate?: boolean } = {},
): Promise<T> {
  const db = await openServiceDb(config.dbUrl);
  try {
    if (options.migrate !== false) {
      if (db.engine === 'sqlite') await migrateToLatest(db);
      else {
        const pending = await pendingMigrations(db);
        if (pending.length)
          throw new Error(
            `the database at ${config.dbUrl} is not migrated (pending: ${pending.join(', ')}); run: mediaforge migrate --db ${config.dbUrl}`,
          );
      }
    }
    return await use(db);
  } finally {
    await db.close();
  }
}
