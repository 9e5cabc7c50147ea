import type { Context } from '../context.js';
import { ApiError } from '../errors.js';

/**
 * 402 40202 while the account owes credits (a refund or dispute took back more than was available):
 * quote, createTask, retry and POST /v1/videos refuse new work until a purchase pays the debt or an
 * operator forgives it. Read before acceptance and thrown from its beforeHold, so a replayed
 * Idempotency-Key still answers with its task; in docs/contracts.md's order after key policy and
 * before funds. The read is not part of the hold's statement: a debt recorded in between lets one
 * task through, which the debt itself still records.
 */
export async function debtRefusal(ctx: Context, accountId: string): Promise<ApiError | undefined> {
  const owed = await ctx.ledger.owed(ctx.db.kysely, accountId);
  return owed > 0 ? new ApiError('account_in_debt', { params: { owed } }) : undefined;
}
