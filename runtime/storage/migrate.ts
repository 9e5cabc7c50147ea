import { Migrator, sql, type Migration, type MigrationResultSet } from 'kysely';
import type { Db, Engine } from './dialect.js';

/**
 * Versioned migrations, in order; each name is recorded once applied. A migration's module is
 * imported when it runs: checking a migrated database (every command, every service start on one)
 * loads none of them (they were 25 of the ~110 modules a command loaded).
 */
const MIGRATIONS: ReadonlyArray<readonly [name: string, load: () => Promise<(engine: Engine) => Migration>]> = [
  ['0001-initial', async () => (await import('./migrations/0001-initial.js')).initial],
  ['0002-webhooks', async () => (await import('./migrations/0002-webhooks.js')).webhooks],
  ['0003-blobs', async () => (await import('./migrations/0003-blobs.js')).blobs],
  ['0004-assets', async () => (await import('./migrations/0004-assets.js')).assets],
  ['0005-console', async () => (await import('./migrations/0005-console.js')).consoleUsers],
  ['0006-blob-chunks', async () => (await import('./migrations/0006-blob-chunks.js')).blobChunks],
  [
    '0007-upload-reservations',
    async () => (await import('./migrations/0007-upload-reservations.js')).uploadReservations,
  ],
  ['0008-worker-lanes', async () => (await import('./migrations/0008-worker-lanes.js')).workerLanes],
  ['0009-upstreams', async () => (await import('./migrations/0009-upstreams.js')).upstreams],
  ['0010-growth-indexes', async () => (await import('./migrations/0010-growth-indexes.js')).growthIndexes],
  ['0011-clip-lengths', async () => (await import('./migrations/0011-clip-lengths.js')).clipLengths],
  ['0012-upstream-callbacks', async () => (await import('./migrations/0012-upstream-callbacks.js')).upstreamCallbacks],
  ['0013-upstream-reconcile', async () => (await import('./migrations/0013-upstream-reconcile.js')).upstreamReconcile],
  ['0014-operator', async () => (await import('./migrations/0014-operator.js')).operatorConsole],
  ['0016-upstream-health', async () => (await import('./migrations/0016-upstream-health.js')).upstreamHealth],
  ['0017-upstream-evidence', async () => (await import('./migrations/0017-upstream-evidence.js')).upstreamEvidence],
  ['0018-final-uploads', async () => (await import('./migrations/0018-final-uploads.js')).finalUploads],
  ['0019-unknown-submits', async () => (await import('./migrations/0019-unknown-submits.js')).unknownSubmits],
  ['0022-payments', async () => (await import('./migrations/0022-payments.js')).payments],
  ['0023-key-policies', async () => (await import('./migrations/0023-key-policies.js')).keyPolicies],
  ['0026-account-reports', async () => (await import('./migrations/0026-account-reports.js')).accountReports],
  ['0028-billed-seconds', async () => (await import('./migrations/0028-billed-seconds.js')).billedSeconds],
  ['0029-price-books', async () => (await import('./migrations/0029-price-books.js')).priceBooks],
  ['0030-alerts', async () => (await import('./migrations/0030-alerts.js')).alerts],
  ['0031-reference-copies', async () => (await import('./migrations/0031-reference-copies.js')).referenceCopies],
];

function migrations(db: Pick<Db, 'engine'>): Record<string, Migration> {
  return Object.fromEntries(
    MIGRATIONS.map(([name, load]) => [
      name,
      { up: async (kysely: Parameters<Migration['up']>[0]) => (await load())(db.engine).up(kysely) },
    ]),
  );
}

/** Every migration's name, in order: what a database migrated to the latest has recorded. */
export function migrationNames(): string[] {
  return MIGRATIONS.map(([name]) => name);
}

/**
 * On PostgreSQL the migration tables live in the connection's current schema, named explicitly
 * (the introspector sees no other schema: pg-introspector.ts).
 */
async function migrator(db: Db): Promise<Migrator> {
  const schema =
    db.engine === 'postgres'
      ? (await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(db.kysely)).rows[0].schema
      : undefined;
  return new Migrator({
    db: db.kysely,
    migrationTableSchema: schema,
    provider: { getMigrations: async () => migrations(db) },
    // The names are ASCII ('0001-initial'): code-point order is their order. Kysely's default,
    // localeCompare, builds an ICU collator in every process that migrates or checks (~15 ms of CPU
    // each: every `mediaforge` command, every service start).
    nameComparator: (a, b) => (a < b ? -1 : a > b ? 1 : 0),
  });
}

/**
 * Failures after which a migration is asked again, per engine: how many attempts, which codes.
 * - PostgreSQL: none. Kysely looks for its migration tables through the dialect's introspector,
 *   which reads only the connection's schema (pg-introspector.ts): another schema dropped or
 *   altered meanwhile no longer fails a migration.
 * - SQLite: another process migrating the same file holds its write lock for as long as its
 *   migrations run (dialect.ts: they run in one IMMEDIATE transaction); a wait longer than
 *   busy_timeout (5 s: an index built on a grown table) is SQLITE_BUSY, and the lock is asked for
 *   again, for up to 2 minutes.
 */
const ASK_AGAIN: Record<Engine, { attempts: number; codes: ReadonlySet<string> }> = {
  postgres: { attempts: 1, codes: new Set() },
  sqlite: { attempts: 24, codes: new Set(['SQLITE_BUSY']) },
};

async function askingAgain<T>(db: Db, run: () => Promise<T>): Promise<T> {
  const { attempts, codes } = ASK_AGAIN[db.engine];
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if (attempt >= attempts || !codes.has((error as { code?: string }).code ?? '')) throw error;
    }
  }
}

export async function migrateToLatest(db: Db): Promise<{ applied: string[] }> {
  return askingAgain(db, async () => {
    const result: MigrationResultSet = await (await migrator(db)).migrateToLatest();
    if (result.error) throw result.error;
    return { applied: (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
  });
}

/** Names of migrations not yet applied: serve refuses to start while any remain. */
export async function pendingMigrations(db: Db): Promise<string[]> {
  const all = await askingAgain(db, async () => (await migrator(db)).getMigrations());
  return all.filter((m) => m.executedAt === undefined).map((m) => m.name);
}
