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
  // The pool listens only to its idle connections: a connection lost while out (its backend
  // terminated) would throw its 'error' event at the process. The loss reaches this transaction
  // anyway, as its query's rejection, and the connection then goes back as broken.
  client.on('error', lostWhileOut);
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
    client.off('error', lostWhileOut);
    client.release(broken);
  }
}

function lostWhileOut(): void {
  // Answered by the query in flight (above).
}
