import { sql } from 'kysely';
import type { BetterSqliteDatabase, Db } from '../storage/dialect.js';
import type { Trx } from '../storage/executor.js';
import { sqliteInsertText } from '../storage/sqlite-insert-text.js';
import { KEY_SPEND_USED } from './key-spend.js';
import type { HoldOutcome, HoldRequest, KeySpendCharge, Ledger } from './ledger.js';
import { heldOrRollBack, holdOutcome } from './hold-refusal.js';
import { settledCharge } from './settled-charge.js';
import { sharedLedger } from './shared.js';

/**
 * The Ledger on SQLite. The hold runs on the createTask path, which is one synchronous SQLite
 * transaction (storage/sqlite-group-commit.ts): prepared statements, no query building
 * (holdInGroup, called by tasks/accept-sqlite.ts). A resolution's settlement and release are
 * Kysely statements inside the resolving transaction; SQLite transactions are serialized, so a
 * read before the write sees what the write will change.
 */

const ENSURE_SPEND_ROW =
  'insert into "key_spend" ("api_key_id", "period_start", "held", "spent") values (?, ?, 0, 0) on conflict do nothing';
const TAKE_SPEND =
  'update "key_spend" set "held" = "held" + ? where "api_key_id" = ? and "period_start" = ? and "held" + "spent" + ? <= ?';
const TAKE_AVAILABLE =
  'update "wallets" set "available" = "available" - ?, "held" = "held" + ? where "account_id" = ? and "available" >= ?';
const INSERT_HOLD = sqliteInsertText('holds', [
  'task_id',
  'account_id',
  'amount',
  'state',
  'charged',
  'created_at',
  'resolved_at',
  'spend_key_id',
  'spend_period',
]);
const INSERT_HOLD_ENTRY = sqliteInsertText('ledger_entries', ['account_id', 'task_id', 'kind', 'amount', 'created_at']);
const AVAILABLE = 'select "available" from "wallets" where "account_id" = ?';

/**
 * Moves the amount from available to held, counting it first against the key's budget when it has
 * one, inside the caller's synchronous transaction. On 'budget' or 'funds' the caller throws, which
 * rolls back its savepoint (a budget counted before a short wallet too).
 */
export function holdInGroup(sqlite: BetterSqliteDatabase, hold: HoldRequest): HoldOutcome {
  const { accountId, taskId, amount, now, spend } = hold;
  // The key's policy comes before the funds (docs/contracts.md, the refusal order).
  if (spend && !takeKeySpend(sqlite, spend, amount)) return 'budget';
  if (sqlite.prepare(TAKE_AVAILABLE).run(amount, amount, accountId, amount).changes !== 1) return 'funds';
  sqlite
    .prepare(INSERT_HOLD)
    .run(taskId, accountId, amount, 'held', null, now, null, spend?.keyId ?? null, spend?.periodStart ?? null);
  sqlite.prepare(INSERT_HOLD_ENTRY).run(accountId, taskId, 'hold', amount, now);
  return 'held';
}

/** Counts `amount` against the key's period; false (nothing counted that the caller's rollback would not undo) when the budget does not cover it. */
function takeKeySpend(sqlite: BetterSqliteDatabase, spend: KeySpendCharge, amount: number): boolean {
  sqlite.prepare(ENSURE_SPEND_ROW).run(spend.keyId, spend.periodStart);
  return sqlite.prepare(TAKE_SPEND).run(amount, spend.keyId, spend.periodStart, amount, spend.budget).changes === 1;
}

/** An account's available credits inside the synchronous transaction (a short wallet's refusal); undefined without a wallet. */
export function availableInGroup(sqlite: BetterSqliteDatabase, accountId: string): number | undefined {
  return (sqlite.prepare(AVAILABLE).get(accountId) as { available: number } | undefined)?.available;
}

/** What the key's budget has used in the period, inside the synchronous transaction (a budget refusal's words). */
export function keySpendUsedInGroup(sqlite: BetterSqliteDatabase, keyId: string, periodStart: number): number {
  return Number((sqlite.prepare(KEY_SPEND_USED).get(keyId, periodStart) as { used: number } | undefined)?.used ?? 0);
}

async function hold(db: Db, request: HoldRequest): Promise<HoldOutcome> {
  if (!db.sqliteGroup) throw new Error('the SQLite ledger needs the SQLite engine');
  return holdOutcome(db.sqliteGroup.run((sqlite) => heldOrRollBack(holdInGroup(sqlite, request))));
}

async function settle(trx: Trx, taskId: string, charge: number, now: number): Promise<number | undefined> {
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

async function release(trx: Trx, taskId: string, now: number): Promise<boolean> {
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

export const sqliteLedger: Ledger = {
  ...sharedLedger,
  engine: 'sqlite',
  hold,
  settle,
  release,
  // A SQLite write transaction (BEGIN IMMEDIATE) holds the database's write lock already.
  lockWallet: async () => {},
};
