import type { PoolClient } from 'pg';
import { sql } from 'kysely';
import type { Db } from '../storage/dialect.js';
import type { Trx } from '../storage/executor.js';
import { pgTransaction } from '../storage/pg-direct.js';
import { PgParams } from '../storage/pg-params.js';
import { postgresPlaceholders } from '../storage/postgres-placeholders.js';
import { heldOrRollBack, holdOutcome } from './hold-refusal.js';
import { KEY_SPEND_USED } from './key-spend.js';
import type { HoldOutcome, HoldRequest, Ledger } from './ledger.js';
import { sharedLedger } from './shared.js';

/**
 * The Ledger on PostgreSQL, each change one statement (every round trip is one more wait while the
 * account's wallet row is locked): createTask's hold as CTE pieces of its one statement
 * (tasks/accept-postgres.ts; holdCtes), a resolution's settlement and release one statement each,
 * the same steps the SQLite ledger takes (sqlite.ts).
 */

/** The name of the CTE that has one row when the hold was taken (none when available was short). */
export const HOLD_TAKEN = 'wallet';

/** The name of the CTE that has one row when the key's budget covered the hold. */
export const SPEND_TAKEN = 'spend';

/**
 * The SQL references of the hold's inputs in the statement the pieces are part of, by name (each a
 * `PgParams` reference of that statement: storage/pg-params.ts), so the pieces never assume a position.
 */
export interface HoldRefs {
  accountId: string;
  taskId: string;
  now: string;
  amount: string;
}

/** The references of a key budget's counter (KeySpendCharge) in the same statement. */
export interface SpendRefs {
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
export function holdCtes(at: HoldRefs, guard: string, spend?: SpendRefs): string {
  const amount = `${at.amount}::bigint`;
  const spendCte = spend
    ? `${SPEND_TAKEN} AS (
  INSERT INTO key_spend (api_key_id, period_start, held, spent)
  SELECT ${spend.keyId}::text, ${spend.periodStart}::bigint, ${amount}, 0 WHERE ${amount} <= ${spend.budget}::bigint ${guard}
  ON CONFLICT (api_key_id, period_start) DO UPDATE SET held = key_spend.held + excluded.held
  WHERE key_spend.held + key_spend.spent + excluded.held <= ${spend.budget}::bigint
  RETURNING 1
),
`
    : '';
  const spendGuard = spend ? `AND EXISTS (SELECT 1 FROM ${SPEND_TAKEN})` : '';
  return `${spendCte}${HOLD_TAKEN} AS (
  UPDATE wallets SET available = available - ${amount}, held = held + ${amount}
  WHERE account_id = ${at.accountId} AND available >= ${amount} ${guard} ${spendGuard}
  RETURNING account_id
),
hold AS (
  INSERT INTO holds (task_id, account_id, amount, state, charged, created_at, resolved_at, spend_key_id, spend_period)
  SELECT ${at.taskId}, account_id, ${amount}, 'held', NULL, ${at.now}::bigint, NULL, ${spend ? `${spend.keyId}::text, ${spend.periodStart}::bigint` : 'NULL, NULL'} FROM ${HOLD_TAKEN}
),
entry AS (
  INSERT INTO ledger_entries (account_id, task_id, kind, amount, created_at)
  SELECT account_id, ${at.taskId}, 'hold', ${amount}, ${at.now}::bigint FROM ${HOLD_TAKEN}
)`;
}

/** The account's available credits as the statement sees them (null: no wallet), for the refusal of a short wallet. */
export function availableOf(accountId: string): string {
  return `(SELECT available FROM wallets WHERE account_id = ${accountId})`;
}

/** What the key's budget has used in the period, on createTask's connection inside its transaction (a budget refusal's words). */
export async function keySpendUsedOn(client: PoolClient, keyId: string, periodStart: number): Promise<number> {
  const { rows } = await client.query<{ used: string }>({ ...USED_ON_CLIENT, values: [keyId, periodStart] });
  return Number(rows[0]?.used ?? 0);
}

/** key-spend.ts's one text of the read, numbered for PostgreSQL. */
const USED_ON_CLIENT = { name: 'key-spend-used', text: postgresPlaceholders(KEY_SPEND_USED) };

type HoldInput = keyof HoldRefs | keyof SpendRefs;

/**
 * The hold's references in a statement's parameters (`params`, whose names include the hold's), and
 * the key budget's when `budgeted`: what holdCtes reads, numbered where the statement first uses them.
 */
export function holdRefs(
  params: Pick<PgParams<HoldInput>, 'ref'>,
  budgeted: boolean,
): { at: HoldRefs; spend: SpendRefs | undefined } {
  const at: HoldRefs = {
    accountId: params.ref('accountId'),
    taskId: params.ref('taskId'),
    now: params.ref('now'),
    amount: params.ref('amount'),
  };
  const spend = budgeted
    ? { keyId: params.ref('keyId'), periodStart: params.ref('periodStart'), budget: params.ref('budget') }
    : undefined;
  return { at, spend };
}

/** The hold alone (no task with it), with or without a key budget: the pieces createTask's statement uses. */
function holdStatement(name: string, budgeted: boolean) {
  const params = new PgParams<HoldInput>();
  const { at, spend } = holdRefs(params, budgeted);
  const text = `WITH ${holdCtes(at, '', spend)}
SELECT (SELECT count(*) FROM ${HOLD_TAKEN})::int AS held, ${budgeted ? `(SELECT count(*) FROM ${SPEND_TAKEN})::int` : '1'} AS budgeted`;
  return { name, text, params };
}
const HOLD = holdStatement('ledger-hold', false);
const HOLD_BUDGETED = holdStatement('ledger-hold-budgeted', true);

async function hold(db: Db, request: HoldRequest): Promise<HoldOutcome> {
  const { spend } = request;
  const statement = spend ? HOLD_BUDGETED : HOLD;
  return holdOutcome(
    pgTransaction(db, async (client) => {
      const { rows } = await client.query<{ held: number; budgeted: number }>({
        name: statement.name,
        text: statement.text,
        values: statement.params.values({ ...request, ...spend }),
      });
      const { held, budgeted } = rows[0]!;
      // The key's policy comes before the funds (docs/contracts.md, the refusal order).
      return heldOrRollBack(budgeted !== 1 ? 'budget' : held !== 1 ? 'funds' : 'held');
    }),
  );
}

/**
 * Settles the task's hold if it is still held: the charge (settledCharge's rule: never below 0,
 * never above the hold) spent, the rest back to available, a `settle` ledger row. One row with the
 * charge, or none when the hold was already resolved (or there is none).
 */
export function settleStatement(taskId: string, charge: number, now: number) {
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
function releaseStatement(taskId: string, now: number) {
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

export const postgresLedger: Ledger = {
  ...sharedLedger,
  engine: 'postgres',
  hold,
  async settle(trx: Trx, taskId: string, charge: number, now: number) {
    const { rows } = await settleStatement(taskId, charge, now).execute(trx);
    return rows[0] === undefined ? undefined : Number(rows[0].charged);
  },
  async release(trx: Trx, taskId: string, now: number) {
    const { rows } = await releaseStatement(taskId, now).execute(trx);
    return rows.length === 1;
  },
  async lockWallet(trx: Trx, accountId: string) {
    await trx.selectFrom('wallets').select('account_id').where('account_id', '=', accountId).forUpdate().execute();
  },
};
