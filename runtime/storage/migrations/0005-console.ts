import type { Kysely } from 'kysely';
import { bigint, type Engine } from '../dialect.js';

/**
 * Console users (email + bcrypt password hash) and their sessions (stored by SHA-256 of the cookie
 * value). A user owns two accounts: `account_id` (the API account its keys spend from) and
 * `playground_account_id` (a wallet of free playground credits that no API key can spend).
 */
export function consoleUsers(engine: Engine) {
  const int = bigint(engine);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('playground_account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('created_at', int, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('sessions')
        .addColumn('id_hash', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
        .addColumn('csrf_token', 'text', (c) => c.notNull())
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('expires_at', int, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sessions_by_user').on('sessions').columns(['user_id']).execute();
    },
  };
}
