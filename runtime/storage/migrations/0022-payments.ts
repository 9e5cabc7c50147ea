import { type Kysely, sql } from 'kysely';
import { bigint, type Engine } from '../dialect.js';

/**
 * Customers buy credits (issue 39; docs/architecture.md "The ledger's kinds and invariants"):
 * - wallets.owed: what a refund or dispute could not take back (a debt; >= 0), wallets.reversed:
 *   what refunds, disputes and debt payments took back, so purchased - reversed = available + held + spent.
 * - ledger rows of kind `purchase` written before this migration were all an operator's grants
 *   (nothing was paid before payments existed): they become `grant`.
 * - payment_sessions: every Checkout Session the service created, with a snapshot of the pack sold
 *   (credits, bonus, price, currency) taken then: a paid session is credited from it, never from
 *   the packs file as it is when the payment arrives. payment_intent links charges and disputes.
 * - payment_events: events the service received but could not apply (an account it does not know,
 *   a session it did not create), for the operator.
 */
export function payments(engine: Engine) {
  const int = bigint(engine);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable('wallets')
        .addColumn('owed', int, (c) => c.notNull().defaultTo(0).check(sql`owed >= 0`))
        .execute();
      await db.schema
        .alterTable('wallets')
        .addColumn('reversed', int, (c) => c.notNull().defaultTo(0).check(sql`reversed >= 0`))
        .execute();
      await sql`UPDATE ledger_entries SET kind = 'grant' WHERE kind = 'purchase'`.execute(db);
      await db.schema
        .createTable('payment_sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('pack', 'text', (c) => c.notNull())
        .addColumn('credits', int, (c) => c.notNull())
        .addColumn('bonus', int, (c) => c.notNull())
        .addColumn('price', int, (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('credited_at', int)
        .addColumn('payment_intent', 'text')
        .execute();
      await db.schema
        .createIndex('payment_sessions_by_intent')
        .on('payment_sessions')
        .column('payment_intent')
        .execute();
      await db.schema
        .createIndex('payment_sessions_by_account')
        .on('payment_sessions')
        .columns(['account_id', 'created_at'])
        .execute();
      await db.schema
        .createTable('payment_events')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('object_id', 'text', (c) => c.notNull())
        .addColumn('problem', 'text', (c) => c.notNull())
        .addColumn('received_at', int, (c) => c.notNull())
        .execute();
    },
  };
}
