import { sql } from 'kysely';
import type { BetterSqliteDatabase, Engine } from '../storage/dialect.js';
import type { Trx } from '../storage/executor.js';
import { sqliteInsertText } from '../storage/sqlite-insert-text.js';
import { pgReleaseHold, pgSettleHold } from './hold-postgres.js';
import { type KeySpendCharge, takeKeySpendSqlite } from './key-spend.js';
import { settledCharge } from './settled-charge.js';

/**
 * The credit wallet. Every change is a ledger row written in the same transaction as the
 * balance update, so balances can be recomputed from rows. Credits are whole numbers.
 * Invariants (docs/architecture.md "The ledger's kinds and invariants"): available, held, owed >= 0;
 * purchased - reversed = available + held + spent.
 */
export async function openWallet(trx: Trx, accountId: string): Promise<void> {
  await trx
    .insertInto('wallets')
    .values({ account_id: accountId, available: 0, held: 0, spent: 0, purchased: 0 })
    .execute();
}

/** Who added credits and why, kept on the credit's ledger row (an operator's grant, a paid session). */
export interface PurchaseOrigin {
  note: string | null;
  /** The operator's user id; null from the CLI and for payments. */
  byUserId: string | null;
  /**
   * The credit's idempotency key (`grant:<key>` for an operator's grant, `stripe:<session id>` for a
   * payment), unique per account (migration 0018): the same credit applied twice is one row.
   */
  reference?: string | null;
}

/** What a credit did: the credits it added, whether it was there already, and the debt it paid first. */
export interface Credited {
  added: number;
  replayed: boolean;
  debtPaid: number;
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

/** What a hold came to: taken, refused by the key's budget, or refused by the wallet. */
export type HoldOutcome = 'held' | 'budget' | 'funds';

/**
 * Moves `amount` from available to held, counting it first against the key's budget when it has one
 * (`spend`). It runs on the createTask path, which is one synchronous SQLite transaction
 * (storage/sqlite-group-commit.ts): prepared statements, no query building. On 'budget' or 'funds'
 * the caller throws, which rolls back its savepoint (a budget counted before a short wallet too).
 * PostgreSQL makes the same changes in createTask's one statement (tasks/accept-postgres.ts).
 */
export function holdCreditsSqlite(
  sqlite: BetterSqliteDatabase,
  accountId: string,
  taskId: string,
  amount: number,
  now: number,
  spend: KeySpendCharge | null = null,
): HoldOutcome {
  // The key's policy comes before the funds (docs/contracts.md, the refusal order).
  if (spend && !takeKeySpendSqlite(sqlite, spend, amount)) return 'budget';
  const taken = sqlite
    .prepare(
      'update "wallets" set "available" = "available" - ?, "held" = "held" + ? where "account_id" = ? and "available" >= ?',
    )
    .run(amount, amount, accountId, amount);
  if (taken.changes !== 1) return 'funds';
  sqlite
    .prepare(
      sqliteInsertText('holds', [
        'task_id',
        'account_id',
        'amount',
        'state',
        'charged',
        'created_at',
        'resolved_at',
        'spend_key_id',
        'spend_period',
      ]),
    )
    .run(taskId, accountId, amount, 'held', null, now, null, spend?.keyId ?? null, spend?.periodStart ?? null);
  sqlite
    .prepare(sqliteInsertText('ledger_entries', ['account_id', 'task_id', 'kind', 'amount', 'created_at']))
    .run(accountId, taskId, 'hold', amount, now);
  return 'held';
}

/**
 * Settles a task's hold to the actual charge (never above the hold): the charge is spent, the
 * rest returns to available. Returns the charge, or undefined when the hold was already resolved.
 * On PostgreSQL the four steps are one statement (hold-postgres.ts), each round trip of a
 * resolution being one more wait while the account's wallet row is locked.
 */
export async function settleHold(
  trx: Trx,
  engine: Engine,
  taskId: string,
  charge: number,
  now: number,
): Promise<number | undefined> {
  if (engine === 'postgres') {
    const { rows } = await pgSettleHold(taskId, charge, now).execute(trx);
    return rows[0]?.charged;
  }
  const hold = await trx.selectFrom('holds').selectAll().where('task_id', '=', taskId).executeTakeFirst();
  if (!hold) return undefined;
  const charged = settledCharge(charge, hold.amount);
  const claimed = await trx
    .updateTable('holds')
    .set({ state: 'settled', charged, resolved_at: now })
    .where('task_id', '=', taskId)
    .where('state', '=', 'held')
    .executeTakeFirst();
  if (Number(claimed.numUpdatedRows) !== 1) return undefined;
  await trx
    .updateTable('wallets')
    .set({
      held: sql`held - ${hold.amount}`,
      spent: sql`spent + ${charged}`,
      available: sql`available + ${hold.amount - charged}`,
    })
    .where('account_id', '=', hold.account_id)
    .execute();
  await trx
    .insertInto('ledger_entries')
    .values({ account_id: hold.account_id, task_id: taskId, kind: 'settle', amount: charged, created_at: now })
    .execute();
  // The key's budget: the hold leaves its period's held, the charge joins its spent.
  if (hold.spend_key_id !== null && hold.spend_period !== null)
    await trx
      .updateTable('key_spend')
      .set({ held: sql`held - ${hold.amount}`, spent: sql`spent + ${charged}` })
      .where('api_key_id', '=', hold.spend_key_id)
      .where('period_start', '=', hold.spend_period)
      .execute();
  return charged;
}

/** Releases a task's hold back to available (failed or expired). False when already resolved. One statement on PostgreSQL. */
export async function releaseHold(trx: Trx, engine: Engine, taskId: string, now: number): Promise<boolean> {
  if (engine === 'postgres') {
    const { rows } = await pgReleaseHold(taskId, now).execute(trx);
    return rows.length === 1;
  }
  const hold = await trx.selectFrom('holds').selectAll().where('task_id', '=', taskId).executeTakeFirst();
  if (!hold) return false;
  const claimed = await trx
    .updateTable('holds')
    .set({ state: 'released', charged: 0, resolved_at: now })
    .where('task_id', '=', taskId)
    .where('state', '=', 'held')
    .executeTakeFirst();
  if (Number(claimed.numUpdatedRows) !== 1) return false;
  await trx
    .updateTable('wallets')
    .set({ held: sql`held - ${hold.amount}`, available: sql`available + ${hold.amount}` })
    .where('account_id', '=', hold.account_id)
    .execute();
  await trx
    .insertInto('ledger_entries')
    .values({ account_id: hold.account_id, task_id: taskId, kind: 'release', amount: hold.amount, created_at: now })
    .execute();
  if (hold.spend_key_id !== null && hold.spend_period !== null)
    await trx
      .updateTable('key_spend')
      .set({ held: sql`held - ${hold.amount}` })
      .where('api_key_id', '=', hold.spend_key_id)
      .where('period_start', '=', hold.spend_period)
      .execute();
  return true;
}

export interface Balance {
  available: number;
  held: number;
  spent: number;
  purchased: number;
  owed: number;
  reversed: number;
}
