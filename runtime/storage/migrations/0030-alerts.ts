import type { Kysely } from 'kysely';
import { bigint, type Engine } from '../dialect.js';

/**
 * Alerts (issue 40, point 5): an account's low-balance threshold and one row per alert crossing.
 * - accounts.low_balance_credits: `account.balance_low` is sent once available credits go below it
 *   (null: no alert).
 * - alert_crossings: one row per crossing, unique on (account, kind, subject, generation), so that
 *   racing requests that all see the line crossed send it once. The generation is what re-arms the
 *   alert: for the balance, the wallet's `purchased` (it moves only with a purchase or a grant), for
 *   a key budget the period's start (the next period re-arms it). `subject` names the key and the
 *   threshold for a budget alert, '' for the balance.
 * - api_keys.budget_alerts: a JSON array of a budget's alert thresholds in percent of its credits;
 *   null: the default 80 and 100.
 */
export function alerts(engine: Engine) {
  const int = bigint(engine);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('accounts').addColumn('low_balance_credits', int).execute();
      await db.schema.alterTable('api_keys').addColumn('budget_alerts', 'text').execute();
      await db.schema
        .createTable('alert_crossings')
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('generation', int, (c) => c.notNull())
        .addColumn('created_at', int, (c) => c.notNull())
        .addPrimaryKeyConstraint('alert_crossings_pk', ['account_id', 'kind', 'subject', 'generation'])
        .execute();
    },
  };
}
