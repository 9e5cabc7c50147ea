import type { PoolClient } from 'pg';
import type { BetterSqliteDatabase, Db } from '../storage/dialect.js';
import type { Executor } from '../storage/executor.js';
import { preparedRead } from '../storage/prepared-read.js';

/**
 * A key budget's counter (issue 40): one key_spend row per key and period start, credits held by the
 * open holds of tasks accepted in that period and credits spent by their settlements. Not a ledger
 * kind (docs/architecture.md, "The ledger's kinds and invariants"): it is written in the hold's own
 * statement (ledger.ts on SQLite, hold-postgres.ts on PostgreSQL) and moved by settlement and release,
 * so a budget is taken under the same lock as the wallet and fifty racing requests cannot overspend it.
 */
export interface KeySpendCharge {
  keyId: string;
  /** The period's start (budgetPeriodAt; 0 for a lifetime budget). */
  periodStart: number;
  /** The budget's credits: held + spent of the period never goes above it. */
  budget: number;
}

const ENSURE_ROW =
  'insert into "key_spend" ("api_key_id", "period_start", "held", "spent") values (?, ?, 0, 0) on conflict do nothing';
const TAKE =
  'update "key_spend" set "held" = "held" + ? where "api_key_id" = ? and "period_start" = ? and "held" + "spent" + ? <= ?';

/**
 * Counts `amount` against the key's period on createTask's synchronous SQLite path; false (nothing
 * counted that the caller's rollback would not undo) when the budget does not cover it.
 */
export function takeKeySpendSqlite(sqlite: BetterSqliteDatabase, spend: KeySpendCharge, amount: number): boolean {
  sqlite.prepare(ENSURE_ROW).run(spend.keyId, spend.periodStart);
  return sqlite.prepare(TAKE).run(amount, spend.keyId, spend.periodStart, amount, spend.budget).changes === 1;
}

const USED = 'select "held" + "spent" as "used" from "key_spend" where "api_key_id" = ? and "period_start" = ?';
const usedRead = preparedRead<[keyId: string, periodStart: number], { used: number }>('key-spend-used', USED);

/** Credits held and spent of the key in the period (0 without a row): what the budget has used. */
export function keySpendUsedSqlite(sqlite: BetterSqliteDatabase, keyId: string, periodStart: number): number {
  const row = sqlite.prepare(USED).get(keyId, periodStart) as { used: number } | undefined;
  return Number(row?.used ?? 0);
}

/**
 * The same read after a commit, on the request path (the budget alerts after every createTask of a
 * key with a budget): a prepared statement on each engine, no query built per request.
 */
export async function keySpendUsedPrepared(db: Db, keyId: string, periodStart: number): Promise<number> {
  return Number((await usedRead.first(db, keyId, periodStart))?.used ?? 0);
}

/** The same read on any executor (a refusal's words on PostgreSQL, GET /api/v1/keys/current, a quote). */
export async function keySpendUsed(db: Executor, keyId: string, periodStart: number): Promise<number> {
  const row = await db
    .selectFrom('key_spend')
    .select(['held', 'spent'])
    .where('api_key_id', '=', keyId)
    .where('period_start', '=', periodStart)
    .executeTakeFirst();
  return row ? Number(row.held) + Number(row.spent) : 0;
}

/** The same read on createTask's PostgreSQL connection, inside its transaction (a budget refusal's words). */
export async function keySpendUsedPg(client: PoolClient, keyId: string, periodStart: number): Promise<number> {
  const { rows } = await client.query<{ used: string }>({
    name: 'key-spend-used',
    text: 'SELECT held + spent AS used FROM key_spend WHERE api_key_id = $1 AND period_start = $2',
    values: [keyId, periodStart],
  });
  return Number(rows[0]?.used ?? 0);
}
