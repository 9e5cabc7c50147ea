import type { Db } from '../storage/dialect.js';
import type { Executor } from '../storage/executor.js';
import type { Database } from '../storage/schema.js';

/**
 * The users and sessions tables (console sign-in). The console's rules (email shape, password
 * length, hashing, one answer for unknown emails) live in runtime/console/users.ts; this module only
 * reads and writes the rows.
 */

export async function userIdByEmail(db: Executor, email: string): Promise<string | undefined> {
  return (await db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst())?.id;
}

export async function credentialsByEmail(
  db: Db,
  email: string,
): Promise<{ id: string; password_hash: string } | undefined> {
  return db.kysely.selectFrom('users').select(['id', 'password_hash']).where('email', '=', email).executeTakeFirst();
}

/** A new user; the role is never given here (sign-up): every user starts as `user`. */
export async function insertUser(db: Executor, row: Omit<Database['users'], 'role'>): Promise<void> {
  await db.insertInto('users').values(row).execute();
}

/** Replaces the hash only if it is still `previous` (a concurrent sign-in may have replaced it). */
export async function replacePasswordHash(db: Db, userId: string, previous: string, next: string): Promise<void> {
  await db.kysely
    .updateTable('users')
    .set({ password_hash: next })
    .where('id', '=', userId)
    .where('password_hash', '=', previous)
    .execute();
}

export async function insertSession(db: Db, row: Database['sessions']): Promise<void> {
  await db.kysely.insertInto('sessions').values(row).execute();
}

export async function deleteSession(db: Db, idHash: string): Promise<void> {
  await db.kysely.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
}

/** The session of a cookie hash with its user and the user's API account settings (expired ones too: the caller checks). */
export async function sessionWithUser(db: Db, idHash: string) {
  return db.kysely
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .innerJoin('accounts', 'accounts.id', 'users.account_id')
    .select([
      'users.id as userId',
      'users.email',
      'users.account_id',
      'users.playground_account_id',
      'users.role',
      'sessions.csrf_token',
      'sessions.expires_at',
      'accounts.language',
      'accounts.payload_version',
    ])
    .where('sessions.id_hash', '=', idHash)
    .executeTakeFirst();
}

export type UserRole = 'user' | 'operator';

/** A user as the operator sees it (no hash). */
export interface UserRow {
  id: string;
  email: string;
  role: UserRole;
  account_id: string;
  playground_account_id: string;
  created_at: number;
}

const USER_COLUMNS = ['id', 'email', 'role', 'account_id', 'playground_account_id', 'created_at'] as const;

/** Sets a user's role; the user's row before the change, or undefined for an unknown email. */
export async function setUserRole(db: Executor, email: string, role: UserRole): Promise<UserRow | undefined> {
  const before = await db.selectFrom('users').select(USER_COLUMNS).where('email', '=', email).executeTakeFirst();
  if (!before) return undefined;
  await db.updateTable('users').set({ role }).where('id', '=', before.id).execute();
  return before;
}

/**
 * Users for the operator, newest first: all, or those whose email contains `query`, or whose id,
 * API account or playground account is `query`.
 */
export async function searchUsers(db: Executor, query: string | undefined, limit: number): Promise<UserRow[]> {
  let select = db.selectFrom('users').select(USER_COLUMNS);
  const q = query?.trim();
  // Emails are stored in lower case (sign-up normalizes them); ids are matched as given.
  if (q)
    select = select.where((eb) =>
      eb.or([
        eb('email', 'like', `%${q.toLowerCase().replace(/[\\%_]/g, '')}%`),
        eb('id', '=', q),
        eb('account_id', '=', q),
        eb('playground_account_id', '=', q),
      ]),
    );
  return select.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

/** The users whose API or playground account is one of these. */
export async function usersOfAccounts(db: Executor, accountIds: readonly string[]): Promise<UserRow[]> {
  if (accountIds.length === 0) return [];
  return db
    .selectFrom('users')
    .select(USER_COLUMNS)
    .where((eb) => eb.or([eb('account_id', 'in', [...accountIds]), eb('playground_account_id', 'in', [...accountIds])]))
    .orderBy('created_at')
    .execute();
}
