/**
 * The PostgreSQL schemas of test services: one per service, its connection's search path, named
 * after the service's directory (`t_<dir>`).
 *
 * Migrating a new schema is the largest single cost of a service start on PostgreSQL: 240 ms of the
 * machine's CPU alone, 1.8 s on average under the suites' load, because PostgreSQL 15 syncs each
 * new index file to disk as it builds it (wait event IO:DataFileImmediateSync) and the schema has
 * dozens. A service that migrates at start anyway (startTestService, startMediaforge) therefore gets,
 * where one is free, a schema that an earlier service of the same run migrated and left: emptied
 * when that service stopped (every row deleted but the migrations' record, every sequence
 * restarted) and renamed to the new service's name. Migrating it again finds the migrations
 * applied. A schema whose migrations' record is not this checkout's whole list, or with anything a
 * migration does not make (a trigger, a function, a view), is dropped instead of kept.
 *
 * Free schemas are named `mf_free_<run>_<random>`, `<run>` being this run's MEDIAFORGE_TEST_RUN
 * (vitest.config.ts): a run never takes another run's schemas, so every run migrates on
 * PostgreSQL at least once per fork (the statement record sees the migrations' DDL), and
 * test/support/postgres-schemas-setup.ts drops a run's free schemas when it ends and those a
 * stopped run left. Without MEDIAFORGE_TEST_RUN, nothing is kept: every schema is new.
 */
import { randomBytes } from 'node:crypto';
import { basename } from 'node:path';
import { migrationNames } from '../../runtime/storage/migrate.js';

/** The prefix of every run's free schemas. */
export const FREE = 'mf_free_';

/** The prefix of this run's free schemas; none outside a vitest run. */
export function freeSchemaPrefix(run = process.env.MEDIAFORGE_TEST_RUN): string | undefined {
  return run && /^[a-z0-9]+$/.test(run) ? `${FREE}${run}_` : undefined;
}

/** The schema of a service whose files live in `dir`. */
export function schemaFor(dir: string): string {
  return `t_${basename(dir)
    .replace(/[^A-Za-z0-9]/g, '_')
    .toLowerCase()}`;
}

/** `server`'s URL with `schema` as its search path. */
export function schemaUrl(server: string, schema: string): string {
  return `${server}${server.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
}

/** pg is loaded only by a suite that makes a schema: the sqlite project's suites never read it. */
export async function withPg<T>(url: string, run: (client: import('pg').Client) => Promise<T>): Promise<T> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** A URL whose search path is a new, empty schema named after `dir` (or the one it has already). */
export async function newSchemaUrl(server: string, dir: string): Promise<string> {
  const schema = schemaFor(dir);
  await withPg(server, (client) => client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`));
  return schemaUrl(server, schema);
}

/**
 * A URL for a service that migrates at start: the schema `dir` has already (a restart), else a
 * free schema of this run renamed to it, else a new one.
 */
export async function reusedSchemaUrl(
  server: string,
  dir: string,
  run = process.env.MEDIAFORGE_TEST_RUN,
): Promise<string> {
  const schema = schemaFor(dir);
  const prefix = freeSchemaPrefix(run);
  if (!prefix) return newSchemaUrl(server, dir);
  await withPg(server, async (client) => {
    const { rows } = await client.query<{ name: string; taken: boolean }>(
      `SELECT nspname AS name, nspname = $2 AS taken FROM pg_namespace
        WHERE starts_with(nspname, $1) OR nspname = $2 ORDER BY nspname = $2 DESC, random() LIMIT 4`,
      [prefix, schema],
    );
    if (rows[0]?.taken) return;
    for (const { name } of rows) {
      try {
        await client.query(`ALTER SCHEMA ${name} RENAME TO ${schema}`);
        return;
      } catch (error) {
        // Another fork renamed it first (3F000: it no longer exists): the next one.
        if ((error as { code?: string }).code !== '3F000') throw error;
      }
    }
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  });
  return schemaUrl(server, schema);
}

/** Drops the schema of `dir`. */
export async function dropSchema(server: string, dir: string): Promise<void> {
  await withPg(server, (client) => client.query(`DROP SCHEMA IF EXISTS ${schemaFor(dir)} CASCADE`));
}

/**
 * After its service stopped: the schema of `dir` emptied and kept for another service of this run
 * (reusedSchemaUrl), or dropped when nothing is kept (no run) or it holds what no migration makes.
 */
export async function releaseSchema(server: string, dir: string, run = process.env.MEDIAFORGE_TEST_RUN): Promise<void> {
  const schema = schemaFor(dir);
  const prefix = freeSchemaPrefix(run);
  if (!prefix) return dropSchema(server, dir);
  await withPg(server, async (client) => {
    const { rows } = await client.query<{ present: boolean; migrated: boolean; extras: string }>(
      `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS present,
              to_regclass($1 || '.kysely_migration') IS NOT NULL AS migrated,
              (SELECT count(*) FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = $1 AND NOT g.tgisinternal)
            + (SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1)
            + (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind IN ('v', 'm'))
              AS extras`,
      [schema],
    );
    const { present, migrated, extras } = rows[0]!;
    if (!present) return;
    // Kept only when its migrations' record is this checkout's whole list: a schema migrated part
    // way, or whose record a test changed (test/ops/exposure.test.ts deletes a row), is not new.
    const recorded =
      migrated && Number(extras) === 0
        ? (await client.query<{ name: string }>(`SELECT name FROM ${schema}.kysely_migration ORDER BY name`)).rows
        : [];
    if (recorded.map((row) => row.name).join(',') !== migrationNames().join(',')) {
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      return;
    }
    const { rows: relations } = await client.query<{ name: string; kind: string }>(
      `SELECT c.relname AS name, c.relkind AS kind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'S') AND c.relname NOT IN ('kysely_migration', 'kysely_migration_lock')`,
      [schema],
    );
    const { rows: references } = await client.query<{ child: string; parent: string }>(
      `SELECT c.relname AS child, p.relname AS parent FROM pg_constraint k
         JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE k.contype = 'f' AND n.nspname = $1 AND c.relname <> p.relname`,
      [schema],
    );
    const tables = deleteOrder(
      relations.filter((r) => r.kind !== 'S').map((r) => r.name),
      references,
    );
    const sequences = relations.filter((r) => r.kind === 'S').map((r) => r.name);
    const free = `${prefix}${randomBytes(6).toString('hex')}`;
    // One transaction: the schema is renamed only once it is empty, or not at all.
    await client.query(
      [
        'BEGIN',
        ...tables.map((table) => `DELETE FROM ${schema}."${table}"`),
        ...sequences.map((sequence) => `SELECT setval('${schema}."${sequence}"', 1, false)`),
        `ALTER SCHEMA ${schema} RENAME TO ${free}`,
        'COMMIT',
      ].join(';\n'),
    );
  });
}

/** `tables` with every table before those it references (a row is deleted before the rows it points at). */
export function deleteOrder(tables: string[], references: ReadonlyArray<{ child: string; parent: string }>): string[] {
  const ordered: string[] = [];
  const placed = new Set<string>();
  const visit = (table: string, path: ReadonlySet<string>) => {
    if (placed.has(table) || path.has(table)) return;
    const within = new Set([...path, table]);
    for (const { child } of references.filter((r) => r.parent === table)) visit(child, within);
    placed.add(table);
    ordered.push(table);
  };
  for (const table of [...tables].sort()) visit(table, new Set());
  return ordered.filter((table) => tables.includes(table));
}
