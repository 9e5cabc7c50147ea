import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../../runtime/accounts/accounts.js';
import { openDb } from '../../../runtime/storage/dialect.js';
import { migrateToLatest } from '../../../runtime/storage/migrate.js';
import {
  deleteOrder,
  FREE,
  newSchemaUrl,
  releaseSchema,
  reusedSchemaUrl,
  schemaFor,
  withPg,
} from '../../support/postgres-schemas.js';
import { TEST_DB } from '../../support/service.js';

/**
 * The schemas of test services on PostgreSQL (test/support/postgres-schemas.ts): a schema a stopped
 * service leaves is kept, emptied, for the next service of the run. What must hold: the next
 * service cannot tell it from a new schema it migrated itself, and a schema holding what no
 * migration makes is never kept.
 */
describe('the order rows are deleted in', () => {
  it.each<[string, { given: { tables: string[]; references: { child: string; parent: string }[] }; want: string[] }]>([
    ['no references: by name', { given: { tables: ['b', 'a'], references: [] }, want: ['a', 'b'] }],
    [
      'a table after every table that references it, through a chain',
      {
        given: {
          tables: ['accounts', 'sessions', 'users'],
          references: [
            { child: 'users', parent: 'accounts' },
            { child: 'sessions', parent: 'users' },
          ],
        },
        want: ['sessions', 'users', 'accounts'],
      },
    ],
    [
      'a reference from outside the list orders nothing and is not listed',
      { given: { tables: ['a'], references: [{ child: 'elsewhere', parent: 'a' }] }, want: ['a'] },
    ],
    [
      'a cycle still lists each table once',
      {
        given: {
          tables: ['a', 'b'],
          references: [
            { child: 'a', parent: 'b' },
            { child: 'b', parent: 'a' },
          ],
        },
        want: ['b', 'a'],
      },
    ],
  ])('%s', (_name, { given, want }) => {
    expect(deleteOrder(given.tables, given.references)).toEqual(want);
  });
});

const server = process.env.MEDIAFORGE_TEST_PG ?? '';
/** A run of its own, so that no other fork takes the schemas this suite frees or gives it theirs. */
const run = `suite${Math.random().toString(36).slice(2, 10)}`;
const dirs: string[] = [];
const newDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'mediaforge-schemas-'));
  dirs.push(dir);
  return dir;
};

afterAll(async () => {
  if (TEST_DB !== 'postgres') return;
  await withPg(server, async (client) => {
    const { rows } = await client.query<{ name: string }>(
      `SELECT nspname AS name FROM pg_namespace WHERE starts_with(nspname, $1) OR nspname = ANY($2)`,
      [`${FREE}${run}_`, dirs.map(schemaFor)],
    );
    for (const { name } of rows) await client.query(`DROP SCHEMA ${name} CASCADE`);
  });
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** What a service could tell apart: its structure (schema name written as S), row counts, sequences. */
async function describeSchema(schema: string) {
  return withPg(server, async (client) => {
    const structure = await client.query<{ line: string }>(
      `SELECT replace(line, $1, 'S') AS line FROM (
         SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '') AS line
           FROM information_schema.columns WHERE table_schema = $1
         UNION ALL SELECT 'index ' || indexname || ' ' || indexdef FROM pg_indexes WHERE schemaname = $1
         UNION ALL SELECT 'constraint ' || c.relname || ' ' || conname || ' ' || pg_get_constraintdef(k.oid)
           FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = k.connamespace WHERE n.nspname = $1
       ) lines ORDER BY line`,
      [schema],
    );
    const relations = await client.query<{ name: string; kind: string }>(
      `SELECT c.relname AS name, c.relkind AS kind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relkind IN ('r', 'S') ORDER BY c.relname`,
      [schema],
    );
    const rows: Record<string, string> = {};
    for (const { name, kind } of relations.rows) {
      rows[name] =
        kind === 'S'
          ? JSON.stringify((await client.query(`SELECT last_value, is_called FROM ${schema}."${name}"`)).rows[0])
          : name === 'kysely_migration'
            ? (
                await client.query(
                  `SELECT string_agg(name, ',' ORDER BY name) AS names FROM ${schema}.kysely_migration`,
                )
              ).rows[0].names
            : `${(await client.query(`SELECT count(*)::int AS n FROM ${schema}."${name}"`)).rows[0].n} rows`;
    }
    return { structure: structure.rows.map((r) => r.line), rows };
  });
}

const exists = (schema: string) =>
  withPg(
    server,
    async (client) => (await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])).rowCount === 1,
  );

/** This suite's free schemas (those of its own run). */
const freeSchemas = () =>
  withPg(server, async (client) =>
    (
      await client.query<{ name: string }>(
        'SELECT nspname AS name FROM pg_namespace WHERE starts_with(nspname, $1) ORDER BY nspname',
        [`${FREE}${run}_`],
      )
    ).rows.map((row) => row.name),
  );

/** A schema from reusedSchemaUrl, migrated; answers what migrating applied. */
async function migrated(dir: string): Promise<string[]> {
  const db = await openDb(await reusedSchemaUrl(server, dir, run));
  try {
    return (await migrateToLatest(db)).applied;
  } finally {
    await db.close();
  }
}

describe.runIf(TEST_DB === 'postgres')('a schema kept for the next service of the run', () => {
  it('is, once migrated again, what a new schema migrated is: the same structure, no rows, sequences restarted', async () => {
    // A service's schema with rows in it: an account, its key, its purchase (a serial id taken).
    const used = newDir();
    expect((await migrated(used)).length).toBeGreaterThan(0);
    const db = await openDb(await reusedSchemaUrl(server, used, run));
    await createAccount(db, { credits: 500, now: Date.now() });
    await db.close();
    expect((await describeSchema(schemaFor(used))).rows.accounts).toBe('1 rows');
    await releaseSchema(server, used, run);
    expect(await exists(schemaFor(used))).toBe(false);
    expect(await freeSchemas()).toHaveLength(1);

    const next = newDir();
    expect(await migrated(next)).toEqual([]); // the kept schema: nothing left to apply
    expect(await freeSchemas()).toEqual([]);
    const fresh = newDir();
    const db2 = await openDb(await newSchemaUrl(server, fresh));
    expect((await migrateToLatest(db2)).applied.length).toBeGreaterThan(0);
    await db2.close();

    const kept = await describeSchema(schemaFor(next));
    const made = await describeSchema(schemaFor(fresh));
    expect(kept.structure.length).toBeGreaterThan(100);
    expect(kept).toEqual(made);
    expect(Object.values(kept.rows).filter((v) => v.startsWith('{'))).not.toEqual([]); // sequences compared
    // No rows but the migrator's own (its lock's one row, as in a new schema).
    expect(Object.entries(kept.rows).filter(([, v]) => v.endsWith(' rows') && v !== '0 rows')).toEqual([
      ['kysely_migration_lock', '1 rows'],
    ]);
  });

  it("is dropped instead when it holds what no migration makes (a function, a trigger), its migrations' record differs, or it was never migrated", async () => {
    const altered = newDir();
    await migrated(altered);
    await withPg(server, async (client) => {
      const schema = schemaFor(altered);
      await client.query(
        `CREATE FUNCTION ${schema}.refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$`,
      );
      await client.query(
        `CREATE TRIGGER refuse BEFORE INSERT ON ${schema}.accounts FOR EACH ROW EXECUTE FUNCTION ${schema}.refuse()`,
      );
    });
    const before = await freeSchemas();
    await releaseSchema(server, altered, run);
    expect(await exists(schemaFor(altered))).toBe(false);
    expect(await freeSchemas()).toEqual(before);

    // Its migrations' record changed (as test/ops/exposure.test.ts does: a row deleted).
    const behind = newDir();
    await migrated(behind);
    await withPg(server, (client) =>
      client.query(`DELETE FROM ${schemaFor(behind)}.kysely_migration WHERE name = '0008-worker-lanes'`),
    );
    await releaseSchema(server, behind, run);
    expect(await exists(schemaFor(behind))).toBe(false);
    expect(await freeSchemas()).toEqual(before);

    const empty = newDir();
    await newSchemaUrl(server, empty);
    await releaseSchema(server, empty, run);
    expect(await exists(schemaFor(empty))).toBe(false);
    expect(await freeSchemas()).toEqual(before);
  });

  it('is not taken while its name is in use: a restart keeps its own schema and rows', async () => {
    const dir = newDir();
    await migrated(dir);
    const db = await openDb(await reusedSchemaUrl(server, dir, run));
    await createAccount(db, { credits: 500, now: Date.now() });
    await db.close();
    expect(await migrated(dir)).toEqual([]);
    expect((await describeSchema(schemaFor(dir))).rows.accounts).toBe('1 rows');
  });
});
