/**
 * Sign-in and sign-up limits, password hashes and the session cookie (issue 16, items 2, 9, 10),
 * through HTTP and database reads: an email is locked out at a client address after the configured
 * failures from it, and only there: its owner at another address still signs in (issue 25, N8;
 * several loopback addresses stand for the clients); a success clears that address's count; sign-in attempts
 * and sign-ups are limited per client address, and a refused sign-up grants nothing; a legacy
 * bcrypt hash signs in and is replaced by scrypt; a malformed mf_session cookie is no session.
 */
import { storedRow } from '../support/stored-rows.js';
import { readFileSync } from 'node:fs';
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startTestService, type TestService } from '../support/service.js';
import { serviceForSuite } from '../support/suite-service.js';
import { CONSOLE_HEADERS, requestFrom } from './support.js';

const PASSWORD = 'correct horse battery';
const FAILURES = 3;
const SIGN_INS_PER_ADDRESS = 8;
const SIGN_UPS_PER_ADDRESS = 3;

/** A bcrypt hash (cost 10) as bcryptjs wrote them; $2a$ and $2b$ hash a short password alike. */
const LEGACY_2B = bcrypt.hashSync(PASSWORD, 10);

const catalogue = parse(readFileSync(new URL('../../spec/errors.yaml', import.meta.url), 'utf8')) as {
  codes: Record<string, { messages: Record<string, string> }>;
};

describe('sign-in and sign-up limits', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({
      signInFailuresBeforeLockout: FAILURES,
      signInLockoutSeconds: 60,
      signInPerAddressPerMinute: SIGN_INS_PER_ADDRESS,
      signUpsPerAddressPerDay: SIGN_UPS_PER_ADDRESS,
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  const signUp = (address: string, email: string, password = PASSWORD) =>
    requestFrom(address, `${t.url}/console/api/signup`, {
      method: 'POST',
      headers: CONSOLE_HEADERS,
      body: { email, password },
    });
  const signIn = (address: string, email: string, password: string, headers: Record<string, string> = {}) =>
    requestFrom(address, `${t.url}/console/api/signin`, {
      method: 'POST',
      headers: { ...CONSOLE_HEADERS, ...headers },
      body: { email, password },
    });
  const storedHash = async (email: string) => (await storedRow(t, 'users', { email })).password_hash;

  // [name, { given: the email attacked (registered or not) }]
  it.each([
    ['a registered email', { email: 'victim@example.com', registered: true }],
    [
      'an unknown email (the same answers: no hint that it is not registered)',
      { email: 'nobody@example.com', registered: false },
    ],
  ])(
    '%s is locked out at an address after the configured failures from it, with Retry-After in the console shape',
    async (_name, { email, registered }) => {
      if (registered) expect((await signUp('127.0.0.40', email)).status).toBe(200);
      for (let i = 0; i < FAILURES; i++) {
        const r = await signIn('127.0.0.41', email, `wrong password ${i}`);
        expect([r.status, r.body.data?.reason]).toEqual([401, 'wrong_credentials']);
      }
      // Even the right password is refused while the email is locked: the lockout does not tell whether a guess was right.
      const locked = await signIn('127.0.0.41', email, PASSWORD, { 'accept-language': 'de' });
      expect([locked.status, locked.body.code]).toEqual([429, 42901]);
      const retryAfter = Number(locked.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(locked.body.msg).toBe(catalogue.codes['42901'].messages.de.replace('{retryAfter}', String(retryAfter)));
      expect(locked.headers['set-cookie']).toBeUndefined();
    },
  );

  it('an attacker who locks an email at their address does not lock out its owner at another (issue 25, N8)', async () => {
    const email = 'owner@example.com';
    expect((await signUp('127.0.0.30', email)).status).toBe(200);
    const attacker = '127.0.0.31';
    const statuses: number[] = [];
    for (let i = 0; i <= FAILURES; i++) statuses.push((await signIn(attacker, email, `a guess ${i}`)).status);
    expect(statuses).toEqual([...Array(FAILURES).fill(401), 429]);
    // The owner, from their own address, right after: signed in, with a session.
    const owner = await signIn('127.0.0.32', email, PASSWORD);
    expect([owner.status, owner.body.code]).toEqual([200, 200]);
    expect(String(owner.headers['set-cookie'])).toMatch(/^mf_session=/);
    // The owner's success clears nothing at the attacker's address: still locked there, even for the right password.
    expect((await signIn(attacker, email, PASSWORD)).status).toBe(429);
  });

  it("a successful sign-in clears the email's failures at its address", async () => {
    const email = 'forgetful@example.com';
    expect((await signUp('127.0.0.50', email)).status).toBe(200);
    const statuses: number[] = [];
    const passwords = ['wrong 1', 'wrong 2', PASSWORD, 'wrong 3', 'wrong 4', 'wrong 5', PASSWORD];
    for (const password of passwords) statuses.push((await signIn('127.0.0.51', email, password)).status);
    // Two failures, a success (count cleared), three failures (the third reaches the limit), then locked.
    expect(statuses).toEqual([401, 401, 200, 401, 401, 401, 429]);
  });

  it('sign-in attempts are limited per client address, whatever the emails', async () => {
    const statuses: number[] = [];
    for (let i = 0; i <= SIGN_INS_PER_ADDRESS; i++)
      statuses.push((await signIn('127.0.0.60', `guess${i}@example.com`, 'a wrong password')).status);
    expect(statuses).toEqual([...Array(SIGN_INS_PER_ADDRESS).fill(401), 429]);
    expect((await signIn('127.0.0.61', 'guess0@example.com', 'a wrong password')).status).toBe(401);
  });

  it('sign-ups are limited per client address and a refused one grants no credits', async () => {
    const db = t.service.ctx.db.kysely;
    const grants = async () =>
      Number(
        (
          await db
            .selectFrom('ledger_entries')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('kind', '=', 'grant')
            .executeTakeFirstOrThrow()
        ).n,
      );
    for (let i = 0; i < SIGN_UPS_PER_ADDRESS; i++)
      expect((await signUp('127.0.0.70', `new${i}@example.com`)).status).toBe(200);
    // A malformed request is answered before it counts.
    expect((await signUp('127.0.0.70', 'not an email')).status).toBe(400);
    const before = await grants();
    const refused = await signUp('127.0.0.70', 'one-too-many@example.com');
    expect([refused.status, refused.body.code]).toEqual([429, 42901]);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['set-cookie']).toBeUndefined();
    expect(await grants()).toBe(before);
    expect(
      await db.selectFrom('users').select('id').where('email', '=', 'one-too-many@example.com').executeTakeFirst(),
    ).toBeUndefined();
    // Another address is another client.
    expect((await signUp('127.0.0.71', 'one-too-many@example.com')).status).toBe(200);
    expect(await grants()).toBe(before + 1);
  });

  it('new passwords are stored as self-describing scrypt hashes', async () => {
    expect((await signUp('127.0.0.80', 'fresh@example.com')).status).toBe(200);
    expect(await storedHash('fresh@example.com')).toMatch(
      /^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/,
    );
  });

  // [name, { given: a bcrypt hash as an older release stored it }]
  it.each([
    ['$2a$', { email: 'old-2a@example.com', hash: LEGACY_2B.replace(/^\$2b\$/, '$2a$'), address: '127.0.0.82' }],
    ['$2b$', { email: 'old-2b@example.com', hash: LEGACY_2B, address: '127.0.0.83' }],
  ])('a legacy %s bcrypt user signs in and the stored hash becomes scrypt', async (_name, { email, hash, address }) => {
    expect(hash.startsWith(_name)).toBe(true);
    expect((await signUp('127.0.0.81', email, 'a temporary password')).status).toBe(200);
    await t.service.ctx.db.kysely
      .updateTable('users')
      .set({ password_hash: hash })
      .where('email', '=', email)
      .execute();
    expect((await signIn(address, email, 'not the password')).status).toBe(401);
    expect(await storedHash(email)).toBe(hash);
    const first = await signIn(address, email, PASSWORD);
    expect([first.status, first.body.code]).toEqual([200, 200]);
    expect(await storedHash(email)).toMatch(/^scrypt\$/);
    expect((await signIn(address, email, PASSWORD)).status).toBe(200);
    expect((await signIn(address, email, 'a temporary password')).status).toBe(401);
  });
});

describe('a malformed mf_session cookie is no session', () => {
  const svc = serviceForSuite();

  // [name, { given: a request carrying the cookie, want: the answer to a request without a session }]
  it.each([
    ['the console page', { method: 'GET', path: '/console', status: 200 }],
    ['the playground page', { method: 'GET', path: '/playground', status: 200 }],
    ['the console API', { method: 'GET', path: '/console/api/session', status: 401 }],
    ['the console API (sign-out)', { method: 'POST', path: '/console/api/signout', status: 401 }],
    ['the playground API', { method: 'GET', path: '/playground/api/balance', status: 401 }],
  ])('%s answers as without a session, not 500', async (_name, { method, path, status }) => {
    for (const cookie of ['mf_session=%E0%A4%A', 'theme=dark; mf_session=%', 'mf_session=%ZZ']) {
      const r = await svc.t.call(method, path, { headers: { cookie } });
      expect([cookie, r.status]).toEqual([cookie, status]);
      if (status === 401) expect(r.body.data.reason).toBe('no_session');
    }
  });
});

describe.skipIf(!process.env.MEDIAFORGE_TEST_REDIS)('limits shared through Redis (MEDIAFORGE_TEST_REDIS)', () => {
  it("two API instances count one email's failures and one key's calls together", async () => {
    const redisUrl = process.env.MEDIAFORGE_TEST_REDIS!;
    const a = await startTestService({ redisUrl, signInFailuresBeforeLockout: 2, rateLimitPerMinute: 3 });
    const b = await startTestService({ redisUrl, signInFailuresBeforeLockout: 2, rateLimitPerMinute: 3 });
    try {
      // Unknown to both databases, and new on every run (the Redis server outlives the test).
      const email = `shared-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`;
      const signIn = (t: TestService) =>
        requestFrom('127.0.0.90', `${t.url}/console/api/signin`, {
          method: 'POST',
          headers: CONSOLE_HEADERS,
          body: { email, password: 'a wrong password' },
        });
      const statuses = [];
      for (const t of [a, b, a]) statuses.push((await signIn(t)).status);
      expect(statuses).toEqual([401, 401, 429]);
      // Another client address has its own count, on either instance.
      const elsewhere = await requestFrom('127.0.0.91', `${b.url}/console/api/signin`, {
        method: 'POST',
        headers: CONSOLE_HEADERS,
        body: { email, password: 'a wrong password' },
      });
      expect(elsewhere.status).toBe(401);
      // One key (made in a's database, the same secret in b's) has one bucket on both.
      const { accountId, apiKey } = await a.account(10);
      await b.service.ctx.db.kysely
        .insertInto('accounts')
        .values(
          await a.service.ctx.db.kysely
            .selectFrom('accounts')
            .selectAll()
            .where('id', '=', accountId)
            .executeTakeFirstOrThrow(),
        )
        .execute();
      await b.service.ctx.db.kysely
        .insertInto('wallets')
        .values(
          await a.service.ctx.db.kysely
            .selectFrom('wallets')
            .selectAll()
            .where('account_id', '=', accountId)
            .executeTakeFirstOrThrow(),
        )
        .execute();
      await b.service.ctx.db.kysely
        .insertInto('api_keys')
        .values(
          await a.service.ctx.db.kysely
            .selectFrom('api_keys')
            .selectAll()
            .where('account_id', '=', accountId)
            .executeTakeFirstOrThrow(),
        )
        .execute();
      const credit = [];
      for (const t of [a, b, a, b]) credit.push((await t.call('GET', '/api/v1/chat/credit', { key: apiKey })).status);
      expect(credit).toEqual([200, 200, 200, 429]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
