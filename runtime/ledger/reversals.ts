import { sql } from 'kysely';
import type { Trx } from '../storage/executor.js';
import type { Reversed } from './ledger.js';

/**
 * Credits taken back (a refund, a dispute), given back (a dispute won) and debts forgiven: the
 * ledger rows of docs/architecture.md "The ledger's kinds and invariants". A reversal never drives
 * available below zero: what it cannot take becomes `owed`, a `debt` row beside it. Each applies
 * once per reference (the unique (account_id, reference) of migration 0018).
 */

/**
 * Takes `credits` back for a refund or a dispute (`reference` the processor's id): as much as
 * available holds, the rest recorded as owed. The row's amount is what was taken (0 when nothing was
 * available: the row still marks the reference as applied; its `debt` row carries the rest).
 */
export async function reverseCredits(
  trx: Trx,
  kind: 'refund' | 'dispute',
  accountId: string,
  credits: number,
  now: number,
  reference: string,
): Promise<Reversed> {
  if (!Number.isSafeInteger(credits) || credits < 0) throw new Error('credits must be a whole number >= 0');
  await lockRow(trx, accountId);
  const wallet = await trx
    .selectFrom('wallets')
    .select('available')
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  const taken = Math.min(credits, Number(wallet.available));
  const rest = credits - taken;
  const inserted = await trx
    .insertInto('ledger_entries')
    .values(row(accountId, kind, taken, now, reference))
    .onConflict((c) => c.columns(['account_id', 'reference']).doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return { taken: 0, owed: 0, replayed: true };
  await trx
    .updateTable('wallets')
    .set({ available: sql`available - ${taken}`, reversed: sql`reversed + ${taken}`, owed: sql`owed + ${rest}` })
    .where('account_id', '=', accountId)
    .execute();
  if (rest > 0)
    await trx
      .insertInto('ledger_entries')
      .values(row(accountId, 'debt', rest, now, `${reference}:debt`))
      .execute();
  return { taken, owed: rest, replayed: false };
}

/**
 * A dispute closed as won: gives back what the dispute took, and its debt: the part still owed is
 * cancelled (a `debt_forgiven` row), the part a later credit already paid comes back to available.
 * A part the operator forgave meanwhile was never taken, so it does not come back: what comes back
 * is at most what reversals and debt payments took (`reversed`; it would go below zero, a 500 the
 * ledger model found: dispute, forgive, dispute won). Nothing when the dispute was never applied or
 * was given back already.
 */
export async function restoreDispute(
  trx: Trx,
  accountId: string,
  now: number,
  disputeReference: string,
): Promise<{ returned: number; cancelled: number; replayed: boolean }> {
  await lockRow(trx, accountId);
  const rows = await trx
    .selectFrom('ledger_entries')
    .select(['kind', 'amount', 'reference'])
    .where('account_id', '=', accountId)
    .where('reference', 'in', [disputeReference, `${disputeReference}:debt`])
    .execute();
  const dispute = rows.find((r) => r.kind === 'dispute');
  if (!dispute) return { returned: 0, cancelled: 0, replayed: true };
  const debt = Number(rows.find((r) => r.kind === 'debt')?.amount ?? 0);
  const wallet = await trx
    .selectFrom('wallets')
    .select(['owed', 'reversed'])
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  const cancelled = Math.min(debt, Number(wallet.owed));
  const returned = Math.min(Number(dispute.amount) + debt - cancelled, Number(wallet.reversed));
  const inserted = await trx
    .insertInto('ledger_entries')
    .values(row(accountId, 'dispute_won', returned, now, `${disputeReference}:won`))
    .onConflict((c) => c.columns(['account_id', 'reference']).doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return { returned: 0, cancelled: 0, replayed: true };
  await trx
    .updateTable('wallets')
    .set({
      available: sql`available + ${returned}`,
      reversed: sql`reversed - ${returned}`,
      owed: sql`owed - ${cancelled}`,
    })
    .where('account_id', '=', accountId)
    .execute();
  if (cancelled > 0)
    await trx
      .insertInto('ledger_entries')
      .values(row(accountId, 'debt_forgiven', cancelled, now, `${disputeReference}:won:debt`))
      .execute();
  return { returned, cancelled, replayed: false };
}

/** An operator forgives everything the account owes (`reference` forgive:<idempotency key>); 0 when nothing was owed. */
export async function forgiveDebt(
  trx: Trx,
  accountId: string,
  now: number,
  origin: { reference: string; byUserId: string | null; note: string | null },
): Promise<{ forgiven: number; replayed: boolean }> {
  await lockRow(trx, accountId);
  // A reference used before is a replay even when nothing is owed now (the first request forgave it).
  const used = await trx
    .selectFrom('ledger_entries')
    .select('id')
    .where('account_id', '=', accountId)
    .where('reference', '=', origin.reference)
    .executeTakeFirst();
  if (used) return { forgiven: 0, replayed: true };
  const wallet = await trx
    .selectFrom('wallets')
    .select('owed')
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  const owed = Number(wallet.owed);
  if (owed === 0) return { forgiven: 0, replayed: false };
  const inserted = await trx
    .insertInto('ledger_entries')
    .values({
      ...row(accountId, 'debt_forgiven', owed, now, origin.reference),
      note: origin.note,
      by_user_id: origin.byUserId,
    })
    .onConflict((c) => c.columns(['account_id', 'reference']).doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return { forgiven: 0, replayed: true };
  await trx
    .updateTable('wallets')
    .set({ owed: sql`owed - ${owed}` })
    .where('account_id', '=', accountId)
    .execute();
  return { forgiven: owed, replayed: false };
}

function row(
  accountId: string,
  kind: 'refund' | 'dispute' | 'dispute_won' | 'debt' | 'debt_forgiven',
  amount: number,
  now: number,
  reference: string,
) {
  return {
    account_id: accountId,
    task_id: null,
    kind,
    amount,
    created_at: now,
    note: null,
    by_user_id: null,
    reference,
  };
}

/** Locks the wallet row until the transaction ends (an UPDATE that changes nothing: valid on both engines, where FOR UPDATE is not). */
async function lockRow(trx: Trx, accountId: string): Promise<void> {
  await trx.updateTable('wallets').set({ owed: sql`owed` }).where('account_id', '=', accountId).execute();
}
