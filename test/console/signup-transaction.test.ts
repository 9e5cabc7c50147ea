/**
 * Sign-up is one transaction (user, API account, playground account, the 30-credit purchase, the
 * playground key), seen through the public surface: concurrent sign-ups with one email leave one
 * user and no orphan accounts, and a failure half-way (injected in the database) leaves nothing.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';

const HEADERS = { 'content-type': 'application/json', 'x-requested-with': 'mediaforge-console' };

function signUpRequest(t: TestService, email: string) {
  return fetch(`${t.url}/console/api/signup`, {
    method: 'POST',
    headers: HEADERS,
    body: JSON.stringify({ email, password: 'correct horse battery' }),
  });
}

describe('sign-up in one transaction', () => {
  let t: TestService;

  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(async () => t?.close());

  /** Row counts of every table a sign-up writes. */
  async function counts() {
    const db = t.service.ctx.db.kysely;
    const count = async (table: 'users' | 'accounts' | 'wallets' | 'api_keys' | 'ledger_entries' | 'sessions') =>
      Number(
        (
          await db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    return {
      users: await count('users'),
      accounts: await count('accounts'),
      wallets: await count('wallets'),
      keys: await count('api_keys'),
      ledger: await count('ledger_entries'),
      sessions: await count('sessions'),
    };
  }

  /** Accounts that no user owns (the test service makes no others). */
  async function orphanAccounts() {
    const db = t.service.ctx.db.kysely;
    const owned = await db.selectFrom('users').select(['account_id', 'playground_account_id']).execute();
    const ids = new Set(owned.flatMap((u) => [u.account_id, u.playground_account_id]));
    return (await db.selectFrom('accounts').select('id').execute()).filter((a) => !ids.has(a.id));
  }

  it('writes exactly two accounts, two wallets, one purchase of 30 and one (playground) key per user', async () => {
    const before = await counts();
    expect((await signUpRequest(t, 'first@example.com')).status).toBe(200);
    const after = await counts();
    expect(after).toEqual({
      users: before.users + 1,
      accounts: before.accounts + 2,
      wallets: before.wallets + 2,
      keys: before.keys + 1,
      ledger: before.ledger + 1,
      sessions: before.sessions + 1,
    });
    const user = await t.service.ctx.db.kysely
      .selectFrom('users')
      .selectAll()
      .where('email', '=', 'first@example.com')
      .executeTakeFirstOrThrow();
    expect(await t.wallet(user.playground_account_id)).toMatchObject({ available: 30, purchased: 30 });
    expect(await t.wallet(user.account_id)).toMatchObject({ available: 0, purchased: 0 });
    await t.checkLedger(user.playground_account_id);
  });

  it('eight concurrent sign-ups with one email: one user, seven 409s, no orphan accounts', async () => {
    const before = await counts();
    const responses = await Promise.all(
      Array.from({ length: 8 }, (_, i) => signUpRequest(t, i % 2 ? 'Race@Example.com' : 'race@example.com ')),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
    const losers = await Promise.all(
      responses.filter((r) => r.status === 409).map((r) => r.json() as Promise<{ data: { reason: string } }>),
    );
    expect(losers.every((body) => body.data.reason === 'email_taken')).toBe(true);
    const users = await t.service.ctx.db.kysely
      .selectFrom('users')
      .select('id')
      .where('email', '=', 'race@example.com')
      .execute();
    expect(users).toHaveLength(1);
    const after = await counts();
    expect(after.accounts - before.accounts).toBe(2);
    expect(after.wallets - before.wallets).toBe(2);
    expect(after.keys - before.keys).toBe(1);
    expect(after.ledger - before.ledger).toBe(1);
    expect(await orphanAccounts()).toEqual([]);
  });

  it('a failure half-way (the user row refused by the database) leaves no account, wallet, purchase or key', async () => {
    const db = t.service.ctx.db;
    if (db.engine !== 'sqlite') return; // the fault is a SQLite trigger; test/console runs on SQLite only
    // The user row is written last: the accounts, wallets, purchase and key are already in the transaction.
    await sql`CREATE TRIGGER refuse_boom BEFORE INSERT ON users WHEN NEW.email = 'boom@example.com' BEGIN SELECT RAISE(ABORT, 'injected failure'); END`.execute(
      db.kysely,
    );
    try {
      const before = await counts();
      const response = await signUpRequest(t, 'boom@example.com');
      expect(response.status).toBe(500);
      expect(response.headers.get('set-cookie')).toBeNull();
      expect(await counts()).toEqual(before);
      expect(await orphanAccounts()).toEqual([]);
    } finally {
      await sql`DROP TRIGGER refuse_boom`.execute(db.kysely);
    }
    // Nothing was left that would block the email: the same sign-up now succeeds.
    expect((await signUpRequest(t, 'boom@example.com')).status).toBe(200);
    expect(await orphanAccounts()).toEqual([]);
  });
});
