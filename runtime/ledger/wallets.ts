import type { Db } from '../storage/dialect.js';
import type { Executor } from '../storage/executor.js';
import { preparedRead } from '../storage/prepared-read.js';
import type { Balance } from './ledger.js';

/**
 * Reads of the wallets table, the same on both engines (the Ledger's balance reads, sqlite.ts and
 * postgres.ts); changes go through the Ledger, each with its ledger row.
 */

/** Every quote's read (and the balance's): prepared, no query built per request. */
const balanceOf = preparedRead<[accountId: string], Balance>(
  'wallet-balance',
  'select "available", "held", "spent", "purchased", "owed", "reversed" from "wallets" where "account_id" = ?',
);

/**
 * An account's committed balance, read outside any transaction (a change in progress is not seen:
 * storage/prepared-read.ts); throws when the account has no wallet (every account has one).
 */
export async function walletOf(db: Db, accountId: string): Promise<Balance> {
  const balance = await balanceOf.first(db, accountId);
  if (!balance) throw new Error(`account ${accountId} has no wallet`);
  return balance;
}

/** What the low-balance alert reads after a hold: only accounts that set a threshold answer a row. */
const lowBalanceWatchRead = preparedRead<
  [accountId: string],
  { available: number; purchased: number; threshold: number }
>(
  'wallet-low-balance-watch',
  'select "w"."available", "w"."purchased", "a"."low_balance_credits" as "threshold" from "wallets" as "w" ' +
    'join "accounts" as "a" on "a"."id" = "w"."account_id" where "w"."account_id" = ? and "a"."low_balance_credits" is not null',
);

/**
 * The account's available and purchased credits beside its low-balance threshold (webhooks/alerts.ts);
 * undefined when the account set none. `purchased` moves only with a purchase or a grant: the
 * alert's arm generation.
 */
export async function lowBalanceWatch(
  db: Db,
  accountId: string,
): Promise<{ available: number; purchased: number; threshold: number } | undefined> {
  const row = await lowBalanceWatchRead.first(db, accountId);
  return (
    row && { available: Number(row.available), purchased: Number(row.purchased), threshold: Number(row.threshold) }
  );
}

/** Balances of several accounts, by account id (accounts without a wallet are absent). */
export async function walletsOf(db: Executor, accountIds: readonly string[]): Promise<Map<string, Balance>> {
  if (accountIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('wallets')
    .selectAll()
    .where('account_id', 'in', [...accountIds])
    .execute();
  return new Map(rows.map(({ account_id, ...balance }) => [account_id, balance]));
}

/** Lifetime purchased credits (0 for an account without a wallet): the storage plan follows them. */
export async function purchasedCredits(db: Executor, accountId: string): Promise<number> {
  const row = await db.selectFrom('wallets').select('purchased').where('account_id', '=', accountId).executeTakeFirst();
  return Number(row?.purchased ?? 0);
}

export async function hasWallet(db: Executor, accountId: string): Promise<boolean> {
  return (
    (await db.selectFrom('wallets').select('account_id').where('account_id', '=', accountId).executeTakeFirst()) !==
    undefined
  );
}

/** Credits held by open holds over all accounts (/metrics). */
export async function totalHeldCredits(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('wallets')
    .select((eb) => eb.fn.sum<number>('held').as('held'))
    .executeTakeFirst();
  return Number(row?.held ?? 0);
}

/** What the account owes (0 for an account without a wallet): new work is refused while it is above 0. */
export async function owedCredits(db: Executor, accountId: string): Promise<number> {
  const row = await db.selectFrom('wallets').select('owed').where('account_id', '=', accountId).executeTakeFirst();
  return Number(row?.owed ?? 0);
}
