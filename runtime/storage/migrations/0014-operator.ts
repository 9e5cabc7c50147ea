import type { Kysely } from 'kysely';
import { bigint, type Engine } from '../dialect.js';

/**
 * The operator console (issue 28):
 * - users.role: `user` (every sign-up) or `operator` (granted by `mediaforge users promote`);
 * - ledger_entries.note and ledger_entries.by_user_id: why credits were added and which operator
 *   added them (null for every other row and for the CLI's `credits add`);
 * - audit_log: every operator action (who, what, when, from which client address, its details as
 *   JSON), written in the action's own transaction and kept like the ledger (nothing purges it).
 */
export function operatorConsole(engine: Engine) {
  const int = bigint(engine);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable('users')
        .addColumn('role', 'text', (c) => c.notNull().defaultTo('user'))
        .execute();
      await db.schema.alterTable('ledger_entries').addColumn('note', 'text').execute();
      await db.schema.alterTable('ledger_entries').addColumn('by_user_id', 'text').execute();
      await db.schema
        .createTable('audit_log')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('target', 'text')
        .addColumn('client_address', 'text')
        .addColumn('details', 'text', (c) => c.notNull())
        .addColumn('created_at', int, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('audit_log_by_time').on('audit_log').columns(['created_at', 'id']).execute();
    },
  };
}
