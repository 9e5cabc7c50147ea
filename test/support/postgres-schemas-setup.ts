import { FREE, freeSchemaPrefix, withPg } from './postgres-schemas.js';

/**
 * The PostgreSQL projects' free schemas (test/support/postgres-schemas.ts): those a stopped run
 * left are dropped before this run starts, and this run's when it ends. A schema another run
 * takes meanwhile is renamed first and not dropped: dropping a free schema never takes one in use.
 */
export default async function setup() {
  const server = process.env.MEDIAFORGE_TEST_PG;
  const mine = freeSchemaPrefix();
  if (!server || !mine) return;
  const dropFree = (which: (name: string) => boolean) =>
    withPg(server, async (client) => {
      const { rows } = await client.query<{ name: string }>(
        'SELECT nspname AS name FROM pg_namespace WHERE starts_with(nspname, $1)',
        [FREE],
      );
      for (const { name } of rows.filter((row) => which(row.name)))
        await client.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
    });
  await dropFree((name) => !name.startsWith(mine));
  return () => dropFree((name) => name.startsWith(mine));
}
