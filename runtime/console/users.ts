import { createHash, randomBytes } from 'node:crypto';
import bcrypt from 'bcryptjs';
import { insertAccount, type Caller } from '../accounts/accounts.js';
import { isUniqueViolation, type Db } from '../storage/dialect.js';
import { newId } from '../ids.js';

/** Free credits of a new user's playground wallet (service specification, item 4). */
export const PLAYGROUND_CREDITS = 30;
export const SESSION_TTL_MS = 7 * 24 * 3600 * 1000;
const BCRYPT_ROUNDS = 10;

export class ConsoleError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

export interface SessionUser {
  userId: string;
  email: string;
  accountId: string;
  playgroundAccountId: string;
  csrfToken: string;
  language: string | null;
  payloadVersion: number;
}

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

function normalizeEmail(email: unknown): string {
  if (typeof email !== 'string') throw new ConsoleError(400, 'invalid_email', 'an email address is required');
  const value = email.trim().toLowerCase();
  if (value.length > 254 || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value)) throw new ConsoleError(400, 'invalid_email', 'not an email address');
  return value;
}

function checkPassword(password: unknown): string {
  if (typeof password !== 'string' || password.length < 8) throw new ConsoleError(400, 'weak_password', 'the password needs at least 8 characters');
  // bcrypt reads at most 72 bytes: longer passwords are refused rather than silently cut.
  if (Buffer.byteLength(password, 'utf8') > 72) throw new ConsoleError(400, 'password_too_long', 'the password may have at most 72 bytes');
  return password;
}

/**
 * A new user, in one transaction: an API account (no credits, no key: keys are made in the
 * console, each shown once), a playground account holding the free credits (a purchase row) and
 * its one key, and the user row. The playground key is never shown to anyone, so no API caller can
 * spend those credits. A failure anywhere, or a concurrent sign-up with the same email (the unique
 * index), leaves nothing behind.
 */
export async function signUp(db: Db, email: unknown, password: unknown, now: number): Promise<string> {
  const address = normalizeEmail(email);
  const secret = checkPassword(password);
  const taken = () => new ConsoleError(409, 'email_taken', 'an account with this email exists; sign in');
  if (await db.kysely.selectFrom('users').select('id').where('email', '=', address).executeTakeFirst()) throw taken();
  // Hashing takes about 70 ms: done before the transaction, which then holds its locks briefly.
  const passwordHash = await bcrypt.hash(secret, BCRYPT_ROUNDS);
  const userId = newId('user');
  try {
    await db.kysely.transaction().execute(async (trx) => {
      if (await trx.selectFrom('users').select('id').where('email', '=', address).executeTakeFirst()) throw taken();
      const main = await insertAccount(trx, { credits: 0, now, firstKey: false });
      const playground = await insertAccount(trx, { credits: PLAYGROUND_CREDITS, now, firstKey: true });
      await trx.insertInto('users').values({ id: userId, email: address, password_hash: passwordHash, account_id: main.accountId, playground_account_id: playground.accountId, created_at: now }).execute();
    });
  } catch (error) {
    // PostgreSQL: two transactions both passed the check; the second insert meets the unique index.
    if (isUniqueViolation(error)) throw taken();
    throw error;
  }
  return userId;
}

let dummyHash: string | undefined;

/** The user of an email and password; one answer (401) for an unknown email and a wrong password. */
export async function signIn(db: Db, email: unknown, password: unknown): Promise<string> {
  const address = typeof email === 'string' ? email.trim().toLowerCase() : '';
  const user = await db.kysely.selectFrom('users').select(['id', 'password_hash']).where('email', '=', address).executeTakeFirst();
  // An unknown email still costs one bcrypt comparison, so timing does not tell which emails exist.
  const hash = user?.password_hash ?? (dummyHash ??= bcrypt.hashSync('not a password', BCRYPT_ROUNDS));
  const ok = typeof password === 'string' && (await bcrypt.compare(password, hash));
  if (!user || !ok) throw new ConsoleError(401, 'wrong_credentials', 'wrong email or password');
  return user.id;
}

/** A new session: the cookie value (only its hash is stored) and the CSRF token the pages send back. */
export async function openSession(db: Db, userId: string, now: number): Promise<{ cookie: string; csrfToken: string }> {
  const cookie = randomBytes(32).toString('base64url');
  const csrfToken = randomBytes(24).toString('base64url');
  await db.kysely.insertInto('sessions').values({ id_hash: sha256(cookie), user_id: userId, csrf_token: csrfToken, created_at: now, expires_at: now + SESSION_TTL_MS }).execute();
  return { cookie, csrfToken };
}

export async function closeSession(db: Db, cookie: string): Promise<void> {
  await db.kysely.deleteFrom('sessions').where('id_hash', '=', sha256(cookie)).execute();
}

export async function findSession(db: Db, cookie: string, now: number): Promise<SessionUser | undefined> {
  const row = await db.kysely
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .innerJoin('accounts', 'accounts.id', 'users.account_id')
    .select(['users.id as userId', 'users.email', 'users.account_id', 'users.playground_account_id', 'sessions.csrf_token', 'sessions.expires_at', 'accounts.language', 'accounts.payload_version'])
    .where('sessions.id_hash', '=', sha256(cookie))
    .executeTakeFirst();
  if (!row || row.expires_at <= now) return undefined;
  return {
    userId: row.userId,
    email: row.email,
    accountId: row.account_id,
    playgroundAccountId: row.playground_account_id,
    csrfToken: row.csrf_token,
    language: row.language,
    payloadVersion: row.payload_version,
  };
}

/** The caller playground tasks are made as: the playground account and its one (never shown) key. */
export async function playgroundCaller(db: Db, user: SessionUser): Promise<Caller> {
  const key = await db.kysely.selectFrom('api_keys').select('id').where('account_id', '=', user.playgroundAccountId).orderBy('created_at').executeTakeFirstOrThrow();
  return { keyId: key.id, accountId: user.playgroundAccountId, workspace: 'personal', language: user.language };
}
