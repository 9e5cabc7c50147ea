import type { Kysely } from 'kysely';
import { bigint, type Engine } from '../dialect.js';

/** Account endpoints (Standard Webhooks) and every webhook delivery, callbacks included, as rows. */
export function webhooks(engine: Engine) {
  const int = bigint(engine);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('webhook_endpoints')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('events', 'text', (c) => c.notNull())
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('previous_secret', 'text')
        .addColumn('previous_until', int)
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('disabled_at', int)
        .execute();
      await db.schema
        .createIndex('webhook_endpoints_by_account')
        .on('webhook_endpoints')
        .columns(['account_id', 'created_at'])
        .execute();
      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('task_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('endpoint_id', 'text')
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('payload_version', 'integer', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('round_attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', int)
        .addColumn('last_attempt_at', int)
        .addColumn('last_status', 'integer')
        .addColumn('last_error', 'text')
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('delivered_at', int)
        .execute();
      await db.schema
        .createIndex('webhook_deliveries_by_account')
        .on('webhook_deliveries')
        .columns(['account_id', 'created_at'])
        .execute();
      await db.schema.createIndex('webhook_deliveries_by_task').on('webhook_deliveries').columns(['task_id']).execute();
    },
  };
}
