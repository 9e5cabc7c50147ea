import { randomBytes } from 'node:crypto';
import type { Db } from '../storage/dialect.js';
import type { Trx } from '../storage/executor.js';

/** The settings row every revocation changes; a cached key lookup is good only while it stands. */
const SETTING = 'key_revision';

/** Records a revocation in the revoking transaction: a new key revision, visible to every process once it commits. */
export async function recordKeyRevocation(trx: Trx): Promise<void> {
  const value = randomBytes(9).toString('base64url');
  await trx
    .insertInto('settings')
    .values({ key: SETTING, value })
    .onConflict((c) => c.column('key').doUpdateSet({ value }))
    .execute();
}

/**
 * What the authentication cache compares before trusting an entry: the revision row itself, read
 * on every request, so a revocation committed by any process (the CLI, the console, another server)
 * is seen by the very next request. SQLite: one prepared statement on the connection (a few
 * microseconds; another process's commit is visible to the next read). PostgreSQL: one primary-key
 * read. A NOTIFY would save that round trip but arrives a moment after the commit, so a request
 * sent right after `keys revoke` returned could still pass (seen in test/reliability/hostile.test.ts).
 */
export class KeyRevision {
  private readonly read: () => string | Promise<string>;

  constructor(db: Db) {
    if (db.sqlite) {
      const statement = db.sqlite.prepare<[string], { value: string }>('SELECT value FROM settings WHERE key = ?');
      this.read = () => statement.get(SETTING)?.value ?? '';
    } else {
      const query = db.kysely.selectFrom('settings').select('value').where('key', '=', SETTING);
      this.read = async () => (await query.executeTakeFirst())?.value ?? '';
    }
  }

  current(): string | Promise<string> {
    return this.read();
  }
}
