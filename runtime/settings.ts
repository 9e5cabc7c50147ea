import { randomBytes } from 'node:crypto';
import type { Db } from './storage/dialect.js';

/**
 * The server's signing secret (quotes, output links, upload tickets): MEDIAFORGE_SECRET when set,
 * else one generated on first start and kept in the database so restarts keep links valid.
 */
export async function settingsSecret(db: Db, fromEnv: string | undefined): Promise<string> {
  if (fromEnv) return fromEnv;
  const existing = await db.kysely
    .selectFrom('settings')
    .select('value')
    .where('key', '=', 'signing_secret')
    .executeTakeFirst();
  if (existing) return existing.value;
  const value = randomBytes(32).toString('base64url');
  await db.kysely
    .insertInto('settings')
    .values({ key: 'signing_secret', value })
    .onConflict((c) => c.column('key').doNothing())
    .execute();
  const stored = await db.kysely
    .selectFrom('settings')
    .select('value')
    .where('key', '=', 'signing_secret')
    .executeTakeFirstOrThrow();
  return stored.value;
}
