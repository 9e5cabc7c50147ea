import { sql } from 'kysely';
import type { Trx } from '../storage/executor.js';
import type { Credited, PurchaseOrigin } from './ledger.js';

/**
 * Credits coming in, the same Kysely statements on both engines (the Ledger's purchase and grant,
 * sqlite.ts and postgres.ts): a new wallet, a purchase or a grant once per reference, and the debt
 * it pays first.
 */

/** A new account's empty wallet. */
export async function openWallet(trx: Trx, accountId: string): Promise<void> {
  await trx
    .insertInto('wallets')
    .values({ account_id: accountId, available: 0, held: 0, spent: 0, purchased: 0 })
    .execute();
}

/**
 * A paid purchase (a payment confirmed by the processor): kind `purchase`. An operator's top-up is
 * a grant (addGrant): the two stay apart so statements and reports can tell paid from given.
 */
export function addPurchase(
  trx: Trx,
  accountId: string,
  credits: number,
  now: number,
  origin?: PurchaseOrigin,
): Promise<Credited> {
  return credit(trx, 'purchase', accountId, credits, now, origin);
}

/** An operator's grant (`credits add`, the console's "add credits", a new account's credits): kind `grant`. */
export function addGrant(
  trx: Trx,
  accountId: string,
  credits: number,
  now: number,
  origin?: PurchaseOrigin,
): Promise<Credited> {
  return credit(trx, 'grant', accountId, credits, now, origin);
}

/**
 * The ledger row, then the wallet. With a reference the row goes in only if the account has none
 * with it (ON CONFLICT on the unique index, so two concurrent requests cannot both pass); a credit
 * already there changes nothing and answers the credits it added then. While something is owed,
 * the credit pays the debt first (a `debt_paid` row in the same transaction).
 */
async function credit(
  trx: Trx,
  kind: 'purchase' | 'grant',
  accountId: string,
  credits: number,
  now: number,
  origin?: PurchaseOrigin,
): Promise<Credited> {
  const reference = origin?.reference ?? null;
  const inserted = await trx
    .insertInto('ledger_entries')
    .values({
      account_id: accountId,
      task_id: null,
      kind,
      amount: credits,
      created_at: now,
      note: origin?.note ?? null,
      by_user_id: origin?.byUserId ?? null,
      reference,
    })
    .onConflict((c) => c.columns(['account_id', 'reference']).doNothing())
    .executeTakeFirst();
  if (reference !== null && Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) {
    const first = await trx
      .selectFrom('ledger_entries')
      .select('amount')
      .where('account_id', '=', accountId)
      .where('reference', '=', reference)
      .executeTakeFirstOrThrow();
    return { added: Number(first.amount), replayed: true, debtPaid: 0 };
  }
  // The update locks the wallet row (PostgreSQL) until the transaction ends: owed read below is this transaction's.
  await trx
    .updateTable('wallets')
    .set({ available: sql`available + ${credits}`, purchased: sql`purchased + ${credits}` })
    .where('account_id', '=', accountId)
    .execute();
  const debtPaid = await payDebt(trx, accountId, credits, now, reference);
  return { added: credits, replayed: false, debtPaid };
}

/** Pays what is owed from credits just added (at most `credits`): available and owed go down, reversed up. */
async function payDebt(
  trx: Trx,
  accountId: string,
  credits: number,
  now: number,
  reference: string | null,
): Promise<number> {
  const wallet = await trx
    .selectFrom('wallets')
    .select(['owed'])
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  const pay = Math.min(credits, Number(wallet.owed));
  if (pay <= 0) return 0;
  await trx
    .updateTable('wallets')
    .set({ available: sql`available - ${pay}`, owed: sql`owed - ${pay}`, reversed: sql`reversed + ${pay}` })
    .where('account_id', '=', accountId)
    .execute();
  await trx
    .insertInto('ledger_entries')
    .values({
      account_id: accountId,
      task_id: null,
      kind: 'debt_paid',
      amount: pay,
      created_at: now,
      note: null,
      by_user_id: null,
      reference: reference === null ? null : `${reference}:debt`,
    })
    .execute();
  return pay;
}
