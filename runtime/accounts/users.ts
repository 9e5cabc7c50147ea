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

export async function insertUser(db: Executor, row: Database['users']): Promise<void> {
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
      'sessions.csrf_token',
      'sessions.expires_at',
      'accounts.language',
      'accounts.payload_version',
    ])
    .where('sessions.id_hash', '=', idHash)
    .executeTakeFirst();
}
