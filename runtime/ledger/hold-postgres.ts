/**
 * createTask's hold on PostgreSQL, as pieces of its one statement (tasks/accept-postgres.ts): the
 * same three changes holdCreditsSqlite makes on SQLite (ledger.ts), written here so that every
 * write to the money tables lives in ledger/. The pieces read the statement's parameters $1 (the
 * account), $2 (the task), $3 (now) and $4 (the amount); a caller binds those four first.
 */

/** The name of the CTE that has one row when the hold was taken (none when available was short). */
export const HOLD_TAKEN = 'wallet';

/**
 * The hold's CTEs: the wallet's available moved to held only where it covers the amount (and
 * `guard`, a further SQL condition, holds), the hold row and its ledger row, both written only when
 * the wallet's update was.
 */
export function pgHoldCtes(guard: string): string {
  return `${HOLD_TAKEN} AS (
  UPDATE wallets SET available = available - $4::bigint, held = held + $4::bigint
  WHERE account_id = $1 AND available >= $4::bigint ${guard}
  RETURNING account_id
),
hold AS (
  INSERT INTO holds (task_id, account_id, amount, state, charged, created_at, resolved_at)
  SELECT $2, account_id, $4::bigint, 'held', NULL, $3::bigint, NULL FROM ${HOLD_TAKEN}
),
entry AS (
  INSERT INTO ledger_entries (account_id, task_id, kind, amount, created_at)
  SELECT account_id, $2, 'hold', $4::bigint, $3::bigint FROM ${HOLD_TAKEN}
)`;
}

/** The account's available credits as the statement sees them (null: no wallet), for the refusal of a short wallet. */
export const PG_AVAILABLE = '(SELECT available FROM wallets WHERE account_id = $1)';
