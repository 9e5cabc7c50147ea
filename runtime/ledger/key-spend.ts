import type { Db } from '../storage/dialect.js';
import type { Executor } from '../storage/executor.js';
import { preparedRead } from '../storage/prepared-read.js';

/**
 * Reads of a key budget's counter (KeySpendCharge, ledger.ts), the same on both engines. The counter
 * is written in the hold's own statement (sqlite.ts holdInGroup, postgres.ts holdCtes) and moved by
 * settlement and release.
 */

/** What a budget has used (held + spent of the period), as one statement text for both engines. */
export const KEY_SPEND_USED =
  'select "held" + "spent" as "used" from "key_spend" where "api_key_id" = ? and "period_start" = ?';
const usedRead = preparedRead<[keyId: string, periodStart: number], { used: number }>('key-spend-used', KEY_SPEND_USED);

/**
 * The read after a commit, on the request path (the budget alerts after every createTask of a
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
