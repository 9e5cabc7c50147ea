import type { Kysely } from 'kysely';
import { bigint, type Engine } from '../dialect.js';

/**
 * Key policies (issue 40): what a key may spend and call.
 * - api_keys.budget_credits, budget_period (`day`, `week`, `month`, `lifetime`): the most credits the
 *   key may hold and spend in one UTC period; null: no budget.
 * - api_keys.allowed_models: a JSON array of model ids and family patterns (`<vendor>/*`); null: any.
 * - api_keys.max_in_flight: the most queued + running tasks of the key; null: no cap.
 * - api_keys.expires_at: from when the key is refused (401); null: never.
 * - api_keys.networks: a JSON array of CIDR blocks the client must be in (403); null: any.
 * - key_spend: the budget's counter, one row per key and period start (0 for `lifetime`): credits
 *   held by open holds and credits spent by settlements of tasks accepted in that period. Written
 *   in the hold's own statement and by settlement and release (runtime/ledger/key-spend.ts).
 * - holds.spend_key_id, spend_period: the key_spend row a hold counted against (null: no budget), so
 *   that its settlement or release adjusts the period it was accepted in, whatever the key's policy
 *   has become since.
 */
export function keyPolicies(engine: Engine) {
  const int = bigint(engine);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('api_keys').addColumn('budget_credits', int).execute();
      await db.schema.alterTable('api_keys').addColumn('budget_period', 'text').execute();
      await db.schema.alterTable('api_keys').addColumn('allowed_models', 'text').execute();
      await db.schema.alterTable('api_keys').addColumn('max_in_flight', 'integer').execute();
      await db.schema.alterTable('api_keys').addColumn('expires_at', int).execute();
      await db.schema.alterTable('api_keys').addColumn('networks', 'text').execute();
      await db.schema
        .createTable('key_spend')
        .addColumn('api_key_id', 'text', (c) => c.notNull())
        .addColumn('period_start', int, (c) => c.notNull())
        .addColumn('held', int, (c) => c.notNull())
        .addColumn('spent', int, (c) => c.notNull())
        .addPrimaryKeyConstraint('key_spend_pk', ['api_key_id', 'period_start'])
        .execute();
      await db.schema.alterTable('holds').addColumn('spend_key_id', 'text').execute();
      await db.schema.alterTable('holds').addColumn('spend_period', int).execute();
    },
  };
}
