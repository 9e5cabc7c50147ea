import { sql, type RawBuilder } from 'kysely';

/**
 * A hold's writes on PostgreSQL as single statements, so that every write to the money tables
 * lives in ledger/: createTask's hold as pieces of its one statement (tasks/accept-postgres.ts),
 * the same three changes holdCreditsSqlite makes on SQLite (ledger.ts); a resolution's settlement
 * and release, the same four steps settleHold and releaseHold take on SQLite, one statement each.
 * The hold's pieces read the statement's parameters $1 (the account), $2 (the task), $3 (now) and
 * $4 (the amount); a caller binds those four first.
 */

/** The name of the CTE that has one row when the hold was taken (none when available was short). */
export const HOLD_TAKEN = 'wallet';

/** The name of the CTE that has one row when the key's budget covered the hold. */
export const SPEND_TAKEN = 'spend';

/** The statement parameters of a key budget's counter (KeySpendCharge), numbered by the caller. */
export interface PgSpendParams {
  keyId: string;
  periodStart: string;
  budget: string;
}

/**
 * The hold's CTEs: with `spend`, first the key's budget counted (the key_spend row of the period
 * inserted or raised only where held + spent stays within the budget: ON CONFLICT DO UPDATE locks the
 * row, so racing requests count one after another); then the wallet's available moved to held only
 * where it covers the amount (and the budget was counted, and `guard`, a further SQL condition,
 * holds), the hold row and its ledger row, both written only when the wallet's update was.
 */
export function pgHoldCtes(guard: string, spend?: PgSpendParams): string {
  const spendCte = spend
    ? `${SPEND_TAKEN} AS (
  INSERT INTO key_spend (api_key_id, period_start, held, spent)
  SELECT ${spend.keyId}::text, ${spend.periodStart}::bigint, $4::bigint, 0 WHERE $4::bigint <= ${spend.budget}::bigint ${guard}
  ON CONFLICT (api_key_id, period_start) DO UPDATE SET held = key_spend.held + excluded.held
  WHERE key_spend.held + key_spend.spent + excluded.held <= ${spend.budget}::bigint
  RETURNING 1
),
`
    : '';
  const spendGuard = spend ? `AND EXISTS (SELECT 1 FROM ${SPEND_TAKEN})` : '';
  return `${spendCte}${HOLD_TAKEN} AS (
  UPDATE wallets SET available = available - $4::bigint, held = held + $4::bigint
  WHERE account_id = $1 AND available >= $4::bigint ${guard} ${spendGuard}
  RETURNING account_id
),
hold AS (
  INSERT INTO holds (task_id, account_id, amount, state, charged, created_at, resolved_at, spend_key_id, spend_period)
  SELECT $2, account_id, $4::bigint, 'held', NULL, $3::bigint, NULL, ${spend ? `${spend.keyId}::text, ${spend.periodStart}::bigint` : 'NULL, NULL'} FROM ${HOLD_TAKEN}
),
entry AS (
  INSERT INTO ledger_entries (account_id, task_id, kind, amount, created_at)
  SELECT account_id, $2, 'hold', $4::bigint, $3::bigint FROM ${HOLD_TAKEN}
)`;
}

/** The account's available credits as the statement sees them (null: no wallet), for the refusal of a short wallet. */
export const PG_AVAILABLE = '(SELECT available FROM wallets WHERE account_id = $1)';

/**
 * Settles the task's hold if it is still held: the charge (settledCharge's rule: never below 0,
 * never above the hold) spent, the rest back to available, a `settle` ledger row. One row with the
 * charge, or none when the hold was already resolved (or there is none).
 */
export function pgSettleHold(taskId: string, charge: number, now: number): RawBuilder<{ charged: number }> {
  if (!Number.isSafeInteger(charge)) throw new Error(`a charge is a whole number of credits (got ${charge})`);
  return sql<{ charged: number }>`
    WITH settled AS (
      UPDATE holds SET state = 'settled', charged = LEAST(GREATEST(${charge}::bigint, 0), amount), resolved_at = ${now}::bigint
      WHERE task_id = ${taskId} AND state = 'held'
      RETURNING account_id, amount, charged, spend_key_id, spend_period
    ),
    spend AS (
      UPDATE key_spend SET held = key_spend.held - settled.amount, spent = key_spend.spent + settled.charged
      FROM settled WHERE key_spend.api_key_id = settled.spend_key_id AND key_spend.period_start = settled.spend_period
    ),
    wallet AS (
      UPDATE wallets SET held = wallets.held - settled.amount, spent = wallets.spent + settled.charged,
        available = wallets.available + (settled.amount - settled.charged)
      FROM settled WHERE wallets.account_id = settled.account_id
    ),
    entry AS (
      INSERT INTO ledger_entries (account_id, task_id, kind, amount, created_at)
      SELECT account_id, ${taskId}, 'settle', charged, ${now}::bigint FROM settled
    )
    SELECT charged FROM settled`;
}

/** Releases the task's hold if it is still held: all of it back to available, a `release` ledger row. One row, or none. */
export function pgReleaseHold(taskId: string, now: number): RawBuilder<{ amount: number }> {
  return sql<{ amount: number }>`
    WITH released AS (
      UPDATE holds SET state = 'released', charged = 0, resolved_at = ${now}::bigint
      WHERE task_id = ${taskId} AND state = 'held'
      RETURNING account_id, amount, spend_key_id, spend_period
    ),
    spend AS (
      UPDATE key_spend SET held = key_spend.held - released.amount
      FROM released WHERE key_spend.api_key_id = released.spend_key_id AND key_spend.period_start = released.spend_period
    ),
    wallet AS (
      UPDATE wallets SET held = wallets.held - released.amount, available = wallets.available + released.amount
      FROM released WHERE wallets.account_id = released.account_id
    ),
    entry AS (
      INSERT INTO ledger_entries (account_id, task_id, kind, amount, created_at)
      SELECT account_id, ${taskId}, 'release', amount, ${now}::bigint FROM released
    )
    SELECT amount FROM released`;
}
