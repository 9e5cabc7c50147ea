import { sql, type Kysely } from 'kysely';
import { bigint, serialPrimaryKey, type Engine } from '../dialect.js';

export function initial(engine: Engine) {
  const int = bigint(engine);
  const serial = serialPrimaryKey(engine);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('settings')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('accounts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('language', 'text')
        .addColumn('webhook_secret', 'text', (c) => c.notNull())
        .addColumn('payload_version', 'integer', (c) => c.notNull().defaultTo(2))
        .execute();
      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('key_prefix', 'text', (c) => c.notNull())
        .addColumn('workspace', 'text', (c) => c.notNull())
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('revoked_at', int)
        .execute();
      await db.schema
        .createTable('wallets')
        .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id'))
        .addColumn('available', int, (c) => c.notNull())
        .addColumn('held', int, (c) => c.notNull())
        .addColumn('spent', int, (c) => c.notNull())
        .addColumn('purchased', int, (c) => c.notNull())
        .addCheckConstraint('wallet_available_not_negative', sql`available >= 0`)
        .addCheckConstraint('wallet_held_not_negative', sql`held >= 0`)
        .execute();
      await db.schema
        .createTable('ledger_entries')
        .addColumn('id', serial.type, serial.build)
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('task_id', 'text')
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('amount', int, (c) => c.notNull())
        .addColumn('created_at', int, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('ledger_by_account').on('ledger_entries').columns(['account_id', 'id']).execute();
      await db.schema
        .createTable('holds')
        .addColumn('task_id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('amount', int, (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('charged', int)
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('resolved_at', int)
        .execute();
      await db.schema
        .createTable('tasks')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('api_key_id', 'text', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('input_json', 'text')
        .addColumn('callback_url', 'text')
        .addColumn('request_id', 'text', (c) => c.notNull())
        .addColumn('progress', 'integer', (c) => c.notNull())
        .addColumn('estimated_credits', int, (c) => c.notNull())
        .addColumn('max_credits', int, (c) => c.notNull())
        .addColumn('charged_credits', int)
        .addColumn('settled', 'integer', (c) => c.notNull())
        .addColumn('error_code', 'text')
        .addColumn('error_message', 'text')
        .addColumn('output_json', 'text')
        .addColumn('warnings_json', 'text', (c) => c.notNull())
        .addColumn('deployment', 'text')
        .addColumn('deployment_handle', 'text')
        .addColumn('retry_of', 'text')
        .addColumn('retention_seconds', int)
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('updated_at', int, (c) => c.notNull())
        .addColumn('started_at', int)
        .addColumn('finished_at', int)
        .addColumn('deadline_at', int, (c) => c.notNull())
        .addColumn('purged_at', int)
        .execute();
      await db.schema.createIndex('tasks_by_key').on('tasks').columns(['api_key_id', 'created_at', 'id']).execute();
      await db.schema
        .createTable('idempotency_keys')
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('api_key_id', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('task_id', 'text', (c) => c.notNull())
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('expires_at', int, (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_pk', ['account_id', 'scope', 'key'])
        .execute();
      await db.schema
        .createTable('work_items')
        .addColumn('id', serial.type, serial.build)
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('task_id', 'text')
        .addColumn('ref_id', 'text')
        .addColumn('due_at', int, (c) => c.notNull())
        .addColumn('lease_owner', 'text')
        .addColumn('lease_until', int)
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('done_at', int)
        .addColumn('created_at', int, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('work_due').on('work_items').columns(['done_at', 'due_at']).execute();
      await db.schema.createIndex('work_by_task').on('work_items').columns(['task_id', 'kind']).execute();
    },
  };
}
