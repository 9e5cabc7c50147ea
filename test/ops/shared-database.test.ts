import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openDb, type Db } from '../../runtime/storage/dialect.js';
import { migrateToLatest } from '../../runtime/storage/migrate.js';
import { dropTestSchema, TEST_DB, testDbUrl } from '../support/service.js';

/**
 * A service whose PostgreSQL database holds other schemas (other services, other suites) that are
 * created and dropped while it migrates: it reads only its own schema (runtime/storage/pg-introspector.ts).
 * Kysely's introspector read every schema's columns, and a schema dropped meanwhile failed the
 * migration with 42703 (seen in CI: health-evidence's service migrating while a neighbour dropped its schema).
 * SQLite has no schemas: nothing to show there.
 */
const dirs: string[] = [];
const dbs: Db[] = [];

async function schemaDb(): Promise<Db> {
  const dir = mkdtempSync(join(tmpdir(), 'mediaforge-shared-db-'));
  dirs.push(dir);
  const db = await openDb(await testDbUrl(dir));
  dbs.push(db);
  return db;
}

afterAll(async () => {
  for (const db of dbs.splice(0)) await db.close();
  for (const dir of dirs.splice(0)) {
    await dropTestSchema(dir);
    rmSync(dir, { recursive: true, force: true });
  }
});

describe.runIf(TEST_DB === 'postgres')('a PostgreSQL schema beside other services', () => {
  it("introspection lists the tables of the connection's schema only", async () => {
    const other = await schemaDb();
    await sql`CREATE TABLE someone_elses_table (id integer)`.execute(other.kysely);
    const own = await schemaDb();
    await migrateToLatest(own);
    const tables = await own.kysely.introspection.getTables({ withInternalKyselyTables: true });
    const names = tables.map((t) => t.name);
    expect(names).toContain('tasks');
    expect(names).toContain('kysely_migration');
    expect(names).not.toContain('someone_elses_table');
    expect(new Set(tables.map((t) => t.schema)).size).toBe(1);
    // Without the internal tables, the migrator's own are left out (as Kysely's introspector does).
    const plain = (await own.kysely.introspection.getTables()).map((t) => t.name);
    expect(plain).not.toContain('kysely_migration');
    expect(plain).toContain('tasks');
  });

  it('migrations succeed while other schemas are being dropped', async () => {
    // Six migrated neighbours, dropped one after another while four new schemas migrate.
    const neighbours = await Promise.all(Array.from({ length: 6 }, () => schemaDb()));
    for (const db of neighbours) await migrateToLatest(db);
    for (const db of neighbours) await db.close();
    dbs.splice(0, dbs.length);
    const neighbourDirs = dirs.splice(0, dirs.length);
    const dropping = (async () => {
      for (const dir of neighbourDirs) {
        await dropTestSchema(dir);
        rmSync(dir, { recursive: true, force: true });
      }
    })();
    const fresh = await Promise.all(Array.from({ length: 4 }, () => schemaDb()));
    const results = await Promise.allSettled(fresh.map((db) => migrateToLatest(db)));
    await dropping;
    expect(results.map((r) => (r.status === 'rejected' ? String(r.reason) : 'migrated'))).toEqual([
      'migrated',
      'migrated',
      'migrated',
      'migrated',
    ]);
  }, 60_000);
});
