import { ApiError } from '../errors.js';
import type { Executor } from '../storage/executor.js';

/**
 * The account-reports scope of an API key (migration 0026): statements and account-wide usage show
 * every key's spending, so a key reads them only when the operator turned the scope on.
 */
export async function requireAccountReports(db: Executor, keyId: string): Promise<void> {
  const row = await db.selectFrom('api_keys').select('account_reports').where('id', '=', keyId).executeTakeFirst();
  if (Number(row?.account_reports ?? 0) !== 1) throw new ApiError('forbidden');
}

/** Turns the scope on or off; false when there is no such key. */
export async function setAccountReports(db: Executor, keyId: string, on: boolean): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ account_reports: on ? 1 : 0 })
    .where('id', '=', keyId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
