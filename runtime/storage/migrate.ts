import { Migrator, sql, type Migration, type MigrationResultSet } from 'kysely';
import type { Db, Engine } from './dialect.js';
import { initial } from './migrations/0001-initial.js';
import { webhooks } from './migrations/0002-webhooks.js';
import { blobs } from './migrations/0003-blobs.js';
import { assets } from './migrations/0004-assets.js';
import { consoleUsers } from './migrations/0005-console.js';
import { blobChunks } from './migrations/0006-blob-chunks.js';
import { uploadReservations } from './migrations/0007-upload-reservations.js';
import { workerLanes } from './migrations/0008-worker-lanes.js';
import { upstreams } from './migrations/0009-upstreams.js';
import { growthIndexes } from './migrations/0010-growth-indexes.js';
import { clipLengths } from './migrations/0011-clip-lengths.js';
import { upstreamCallbacks } from './migrations/0012-upstream-callbacks.js';
import { upstreamReconcile } from './migrations/0013-upstream-reconcile.js';
import { operatorConsole } from './migrations/0014-operator.js';
import { upstreamHealth } from './migrations/0016-upstream-health.js';
import { upstreamEvidence } from './migrations/0017-upstream-evidence.js';
import { finalUploads } from './migrations/0018-final-uploads.js';
import { unknownSubmits } from './migrations/0019-unknown-submits.js';
import { payments } from './migrations/0022-payments.js';
import { keyPolicies } from './migrations/0023-key-policies.js';
import { accountReports } from './migrations/0026-account-reports.js';
import { billedSeconds } from './migrations/0028-billed-seconds.js';
import { priceBooks } from './migrations/0029-price-books.js';
import { alerts } from './migrations/0030-alerts.js';
import { referenceCopies } from './migrations/0031-reference-copies.js';

/** Versioned migrations, in order; each name is recorded once applied. */
function migrations(db: Pick<Db, 'engine'>): Record<string, Migration> {
  return {
    '0001-initial': initial(db.engine),
    '0002-webhooks': webhooks(db.engine),
    '0003-blobs': blobs(db.engine),
    '0004-assets': assets(db.engine),
    '0005-console': consoleUsers(db.engine),
    '0006-blob-chunks': blobChunks(db.engine),
    '0007-upload-reservations': uploadReservations(),
    '0008-worker-lanes': workerLanes(),
    '0009-upstreams': upstreams(db.engine),
    '0010-growth-indexes': growthIndexes(),
    '0011-clip-lengths': clipLengths(),
    '0012-upstream-callbacks': upstreamCallbacks(db.engine),
    '0013-upstream-reconcile': upstreamReconcile(),
    '0014-operator': operatorConsole(db.engine),
    '0016-upstream-health': upstreamHealth(db.engine),
    '0017-upstream-evidence': upstreamEvidence(db.engine),
    '0018-final-uploads': finalUploads(),
    '0019-unknown-submits': unknownSubmits(db.engine),
    '0022-payments': payments(db.engine),
    '0023-key-policies': keyPolicies(db.engine),
    '0026-account-reports': accountReports(),
    '0028-billed-seconds': billedSeconds(),
    '0029-price-books': priceBooks(),
    '0030-alerts': alerts(db.engine),
    '0031-reference-copies': referenceCopies(db.engine),
  };
}

/** Every migration's name, in order: what a database migrated to the latest has recorded. */
export function migrationNames(): string[] {
  return Object.keys(migrations({ engine: 'sqlite' }));
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
