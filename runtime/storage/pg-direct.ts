import type { PoolClient } from 'pg';
import type { Db } from './dialect.js';

/**
 * One transaction on a connection of the pool, its statements sent straight to node-postgres: for
 * a hot write path whose statements are few and fixed (createTask), as named prepared statements
 * (`{ name, text, values }`: parsed and planned once per connection), with no query built per
 * request. A throw rolls it back; a connection whose ROLLBACK failed is closed, not reused.
 */
export async function pgTransaction<T>(db: Db, work: (client: PoolClient) => Promise<T>): Promise<T> {
  if (!db.pg) throw new Error('pgTransaction needs the PostgreSQL engine');
  const client = await db.pg.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackError: Error) => {
      broken = rollbackError;
    });
    throw error;
  } finally {
    client.release(broken);
  }
}
