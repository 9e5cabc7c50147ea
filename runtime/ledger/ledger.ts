import type { Db, Engine } from '../storage/dialect.js';
import type { Executor, Trx } from '../storage/executor.js';

/**
 * The credit ledger: every change of money (docs/architecture.md "The ledger's kinds and
 * invariants"), one interface with one implementation per engine (sqlite.ts, postgres.ts; the
 * statements both engines share are in credits.ts, reversals.ts, wallets.ts and key-spend.ts). The
 * service picks the implementation once, where it opens the database (ledgerFor, `ctx.ledger`).
 * Every change is a ledger row written in the same transaction as the balance update, so balances
 * can be recomputed from rows; credits are whole numbers. Invariants: available, held, owed >= 0;
 * purchased - reversed = available + held + spent.
 */
export interface Ledger {
  readonly engine: Engine;

  /**
   * Moves `amount` from available to held, counting it first against the key's budget when it has
   * one: the same statements createTask's acceptance runs (sqlite.ts holdInGroup, postgres.ts
   * holdCtes), in a transaction of their own. A refusal changes nothing.
   */
  hold(db: Db, hold: HoldRequest): Promise<HoldOutcome>;
  /**
   * Settles a task's hold to the actual charge (settledCharge: never above the hold): the charge is
   * spent, the rest returns to available. The charge, or undefined when the hold was already resolved.
   */
  settle(trx: Trx, taskId: string, charge: number, now: number): Promise<number | undefined>;
  /** Releases a task's hold back to available (failed, expired, cancelled). False when already resolved. */
  release(trx: Trx, taskId: string, now: number): Promise<boolean>;

  /** A new account's empty wallet. */
  openWallet(trx: Trx, accountId: string): Promise<void>;
  /** A paid purchase (kind `purchase`): once per reference; pays a debt first. */
  purchase(trx: Trx, accountId: string, credits: number, now: number, origin?: PurchaseOrigin): Promise<Credited>;
  /** An operator's grant (kind `grant`), kept apart from paid purchases: once per reference; pays a debt first. */
  grant(trx: Trx, accountId: string, credits: number, now: number, origin?: PurchaseOrigin): Promise<Credited>;
  /** A refund or a dispute: as much as available holds is taken, the rest becomes a debt. Once per reference. */
  reverse(
    trx: Trx,
    kind: 'refund' | 'dispute',
    accountId: string,
    credits: number,
    now: number,
    reference: string,
  ): Promise<Reversed>;
  /** A dispute closed as won: what it took comes back, its debt still owed is cancelled. */
  restoreDispute(
    trx: Trx,
    accountId: string,
    now: number,
    disputeReference: string,
  ): Promise<{ returned: number; cancelled: number; replayed: boolean }>;
  /** An operator forgives everything the account owes. */
  forgiveDebt(
    trx: Trx,
    accountId: string,
    now: number,
    origin: { reference: string; byUserId: string | null; note: string | null },
  ): Promise<{ forgiven: number; replayed: boolean }>;

  /** An account's committed balance (a prepared read); throws when the account has no wallet. */
  balance(db: Db, accountId: string): Promise<Balance>;
  /** Balances of several accounts, by account id (accounts without a wallet are absent). */
  balances(db: Executor, accountIds: readonly string[]): Promise<Map<string, Balance>>;
  hasWallet(db: Executor, accountId: string): Promise<boolean>;
  /** What the account owes (0 without a wallet): new work is refused while it is above 0. */
  owed(db: Executor, accountId: string): Promise<number>;
  /** Lifetime purchased credits (0 without a wallet): the storage plan follows them. */
  purchased(db: Executor, accountId: string): Promise<number>;
  /** Credits held by open holds over all accounts (/metrics). */
  totalHeld(db: Executor): Promise<number>;
  /** The account's available and purchased credits beside its low-balance threshold; undefined when it set none. */
  lowBalanceWatch(
    db: Db,
    accountId: string,
  ): Promise<{ available: number; purchased: number; threshold: number } | undefined>;
  /** Holds the account's wallet row until the transaction ends (a transaction that reads then writes by it). */
  lockWallet(trx: Trx, accountId: string): Promise<void>;
  /** Credits held and spent of the key in the period (0 without a row): what its budget has used. */
  keySpendUsed(db: Executor, keyId: string, periodStart: number): Promise<number>;
  /** The same read as a prepared statement, on the request path (the budget alerts after every createTask). */
  keySpendUsedPrepared(db: Db, keyId: string, periodStart: number): Promise<number>;
}

/** A hold asked for: the task's maximum charge, and the key's budget counter when the key has a budget. */
export interface HoldRequest {
  accountId: string;
  taskId: string;
  amount: number;
  now: number;
  spend: KeySpendCharge | null;
}

/** What a hold came to: taken, refused by the key's budget, or refused by the wallet. */
export type HoldOutcome = 'held' | 'budget' | 'funds';

/**
 * A key budget's counter (issue 40): one key_spend row per key and period start, credits held by the
 * open holds of tasks accepted in that period and credits spent by their settlements. Not a ledger
 * kind: it is written in the hold's own statement and moved by settlement and release, so a budget
 * is taken under the same lock as the wallet and fifty racing requests cannot overspend it.
 */
export interface KeySpendCharge {
  keyId: string;
  /** The period's start (budgetPeriodAt; 0 for a lifetime budget). */
  periodStart: number;
  /** The budget's credits: held + spent of the period never goes above it. */
  budget: number;
}

export interface Balance {
  available: number;
  held: number;
  spent: number;
  purchased: number;
  owed: number;
  reversed: number;
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

export interface Reversed {
  /** Credits taken from available. */
  taken: number;
  /** Credits that could not be taken, now owed. */
  owed: number;
  /** True when a row with this reference was there already: nothing changed. */
  replayed: boolean;
}
