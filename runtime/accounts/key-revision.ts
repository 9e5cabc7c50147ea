import { randomBytes } from 'node:crypto';
import type { Db } from '../storage/dialect.js';
import type { Trx } from '../storage/executor.js';

/** The settings row every revocation changes; a cached key lookup is good only while it stands. */
export const KEY_REVISION_SETTING = 'key_revision';
const SETTING = KEY_REVISION_SETTING;

/**
 * Records a revocation in the revoking transaction (`trx`, of `db`): a new key revision, visible to
 * every process once it commits, and counted on `db` for this connection's own check.
 */
export async function recordKeyRevocation(db: Db, trx: Trx): Promise<void> {
  const value = randomBytes(9).toString('base64url');
  await trx
    .insertInto('settings')
    .values({ key: SETTING, value })
    .onConflict((c) => c.column('key').doUpdateSet({ value }))
    .execute();
  // SQLite's data_version does not move for this connection's own commit (the console, an operator's action).
  db.keyRevocations.recorded++;
}

/**
 * What the authentication cache compares before trusting an entry, checked on every request, so a
 * revocation committed by any process (the CLI, the console, another server) is seen by the very
 * next request. A NOTIFY would save the check but arrives a moment after the commit, so a request
 * sent right after `keys revoke` returned could still pass (seen in test/reliability/hostile.test.ts).
 * - SQLite: the revision row is read again only when the database changed since the last check
 *   (`PRAGMA data_version`, which moves when another connection commits) or this process recorded
 *   a revocation; a request otherwise reads nothing more.
 * - PostgreSQL: one primary-key read a request (on a cache miss the key and the revision are read
 *   in one statement: accounts.ts, findCallerAtRevision).
 */
export class KeyRevision {
  readonly current: () => string | Promise<string>;

  constructor(db: Db) {
    if (db.sqlite) {
      const sqlite = db.sqlite;
      const dataVersion = sqlite.prepare<[], number>('PRAGMA data_version').pluck();
      const statement = sqlite.prepare<[string], { value: string }>('SELECT value FROM settings WHERE key = ?');
      let seenVersion = -1;
      let seenLocal = -1;
      let revision = '';
      this.current = () => {
        const version = dataVersion.get()!;
        if (version !== seenVersion || db.keyRevocations.recorded !== seenLocal) {
          revision = statement.get(SETTING)?.value ?? '';
          seenVersion = version;
          // A revocation of this process is counted as seen once its transaction has ended: read
          // inside it (the same connection), the row may yet roll back or commit after this read.
          if (!sqlite.inTransaction) seenLocal = db.keyRevocations.recorded;
        }
        return revision;
      };
    } else {
      const pg = db.pg!;
      const revisionQuery = {
        name: 'key-revision',
        text: 'SELECT value FROM settings WHERE key = $1',
        values: [SETTING],
      };
      this.current = async () => (await pg.query<{ value: string }>(revisionQuery)).rows[0]?.value ?? '';
    }
  }
}
