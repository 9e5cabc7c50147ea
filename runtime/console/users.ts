import { NO_POLICY } from '../accounts/key-policy.js';
import { priceBookOfAccount } from '../accounts/price-book.js';
import { createHash, randomBytes } from 'node:crypto';
import { firstKeyOfAccount, insertAccount, type Caller } from '../accounts/accounts.js';
import {
  credentialsByEmail,
  deleteSession,
  insertSession,
  insertUser,
  replacePasswordHash,
  sessionWithUser,
  userIdByEmail,
  type UserRole,
} from '../accounts/users.js';
import { isUniqueViolation, type Db } from '../storage/dialect.js';
import { newId } from '../ids.js';
import type { PasswordHasher } from './passwords.js';
import { consoleRefusal } from '../console-refusal.js';

/** Free credits of a new user's playground wallet (service specification, item 4). */
export const PLAYGROUND_CREDITS = 30;
export const SESSION_TTL_MS = 7 * 24 * 3600 * 1000;

export interface SessionUser {
  userId: string;
  email: string;
  accountId: string;
  playgroundAccountId: string;
  csrfToken: string;
  language: string | null;
  payloadVersion: number;
  /** `operator` may use the operator's operations (runtime/http/routes/operator.ts). */
  role: UserRole;
}

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

export function normalizeEmail(email: unknown): string {
  if (typeof email !== 'string') throw consoleRefusal('invalid_email', 'an email address is required');
  const value = email.trim().toLowerCase();
  if (value.length > 254 || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value))
    throw consoleRefusal('invalid_email', 'not an email address');
  // Control and format characters (ESC, U+202E and the other bidirectional controls, zero-width
  // ones) belong in no address, and would reach the operator's terminal and pages as they are.
  if (/[\p{Cc}\p{Cf}]/u.test(value)) throw consoleRefusal('invalid_email', 'not an email address');
  return value;
}

export function checkPassword(password: unknown): string {
  if (typeof password !== 'string' || password.length < 8)
    throw consoleRefusal('weak_password', 'the password needs at least 8 characters');
  // Older hashes were bcrypt, which reads at most 72 bytes: the limit stays so that one rule holds for every account.
  if (Buffer.byteLength(password, 'utf8') > 72)
    throw consoleRefusal('password_too_long', 'the password may have at most 72 bytes');
  return password;
}

/**
 * A new user, in one transaction: an API account (no credits, no key: keys are made in the
 * console, each shown once), a playground account holding the free credits (a purchase row) and
 * its one key, and the user row. The playground key is never shown to anyone, so no API caller can
 * spend those credits. A failure anywhere, or a concurrent sign-up with the same email (the unique
 * index), leaves nothing behind.
 */
export async function signUp(
  db: Db,
  passwords: PasswordHasher,
  email: unknown,
  password: unknown,
  now: number,
): Promise<string> {
  const address = normalizeEmail(email);
  const secret = checkPassword(password);
  const taken = () => consoleRefusal('email_taken', 'an account with this email exists; sign in');
  // Hashed before anything else, also for a registered email: the 409 costs what a sign-up costs
  // (docs/console.md: what sign-up still tells about registered emails). Done before the
  // transaction, which then holds its locks briefly.
  const passwordHash = await passwords.hash(secret);
  if (await userIdByEmail(db.kysely, address)) throw taken();
  const userId = newId('user');
  try {
    await db.kysely.transaction().execute(async (trx) => {
      if (await userIdByEmail(trx, address)) throw taken();
      const main = await insertAccount(trx, { credits: 0, now, firstKey: false });
      const playground = await insertAccount(trx, { credits: PLAYGROUND_CREDITS, now, firstKey: true });
      await insertUser(trx, {
        id: userId,
        email: address,
        password_hash: passwordHash,
        account_id: main.accountId,
        playground_account_id: playground.accountId,
        created_at: now,
      });
    });
  } catch (error) {
    // PostgreSQL: two transactions both passed the check; the second insert meets the unique index.
    if (isUniqueViolation(error)) throw taken();
    throw error;
  }
  return userId;
}

/**
 * The user of an email and password; one answer (401) for an unknown email and a wrong password.
 * A legacy (bcrypt) hash that matches is replaced by scrypt.
 */
export async function signIn(db: Db, passwords: PasswordHasher, email: unknown, password: unknown): Promise<string> {
  const address = typeof email === 'string' ? email.trim().toLowerCase() : '';
  const user = await credentialsByEmail(db, address);
  // An unknown email still costs one scrypt verification, so timing does not tell which emails exist.
  const hash = user?.password_hash ?? (await passwords.dummyHash());
  const ok = typeof password === 'string' && (await passwords.verify(password, hash));
  if (!user || !ok) throw consoleRefusal('wrong_credentials', 'wrong email or password');
  if (passwords.needsUpgrade(user.password_hash)) {
    const upgraded = await passwords.hash(password as string);
    // Only if the hash is still the one just verified (a concurrent sign-in may have upgraded it).
    await replacePasswordHash(db, user.id, user.password_hash, upgraded);
  }
  return user.id;
}

/** A new session: the cookie value (only its hash is stored) and the CSRF token the pages send back. */
export async function openSession(db: Db, userId: string, now: number): Promise<{ cookie: string; csrfToken: string }> {
  const cookie = randomBytes(32).toString('base64url');
  const csrfToken = randomBytes(24).toString('base64url');
  await insertSession(db, {
    id_hash: sha256(cookie),
    user_id: userId,
    csrf_token: csrfToken,
    created_at: now,
    expires_at: now + SESSION_TTL_MS,
  });
  return { cookie, csrfToken };
}

export async function closeSession(db: Db, cookie: string): Promise<void> {
  await deleteSession(db, sha256(cookie));
}

export async function findSession(db: Db, cookie: string, now: number): Promise<SessionUser | undefined> {
  const row = await sessionWithUser(db, sha256(cookie));
  if (!row || row.expires_at <= now) return undefined;
  return {
    userId: row.userId,
    email: row.email,
    accountId: row.account_id,
    playgroundAccountId: row.playground_account_id,
    csrfToken: row.csrf_token,
    language: row.language,
    payloadVersion: row.payload_version,
    role: row.role,
  };
}

/** The caller playground tasks are made as: the playground account and its one (never shown) key. */
export async function playgroundCaller(db: Db, user: SessionUser): Promise<Caller> {
  const keyId = await firstKeyOfAccount(db, user.playgroundAccountId);
  const priceBook = await priceBookOfAccount(db.kysely, user.playgroundAccountId);
  return {
    keyId,
    accountId: user.playgroundAccountId,
    workspace: 'personal',
    language: user.language,
    policy: NO_POLICY,
    priceBook,
  };
}
