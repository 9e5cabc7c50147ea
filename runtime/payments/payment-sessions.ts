import type { Executor } from '../storage/executor.js';
import type { SoldPack } from './payment-processor.js';

/**
 * Every read and write of payment_sessions and payment_events (migration 0022): the sessions the
 * service created, with the pack sold as it was then, and events it could not apply.
 */

export interface StoredSession extends SoldPack {
  id: string;
  accountId: string;
  creditedAt: number | null;
  paymentIntent: string | null;
}

export async function recordSession(
  db: Executor,
  session: { id: string; accountId: string; pack: SoldPack; now: number },
): Promise<void> {
  const { pack } = session;
  await db
    .insertInto('payment_sessions')
    .values({
      id: session.id,
      account_id: session.accountId,
      pack: pack.name,
      credits: pack.credits,
      bonus: pack.bonus,
      price: pack.price,
      currency: pack.currency,
      created_at: session.now,
      credited_at: null,
      payment_intent: null,
    })
    // The same attempt (idempotency key) answers the same session: recorded once.
    .onConflict((c) => c.column('id').doNothing())
    .execute();
}

type Row = {
  id: string;
  account_id: string;
  pack: string;
  credits: number;
  bonus: number;
  price: number;
  currency: string;
  credited_at: number | null;
  payment_intent: string | null;
};

function toStored(row: Row): StoredSession {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.pack,
    credits: Number(row.credits),
    bonus: Number(row.bonus),
    price: Number(row.price),
    currency: row.currency,
    creditedAt: row.credited_at === null ? null : Number(row.credited_at),
    paymentIntent: row.payment_intent,
  };
}

export async function storedSession(db: Executor, id: string): Promise<StoredSession | undefined> {
  const row = await db.selectFrom('payment_sessions').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toStored(row) : undefined;
}

export async function sessionOfPaymentIntent(db: Executor, paymentIntent: string): Promise<StoredSession | undefined> {
  const row = await db
    .selectFrom('payment_sessions')
    .selectAll()
    .where('payment_intent', '=', paymentIntent)
    .executeTakeFirst();
  return row ? toStored(row) : undefined;
}

/** Marks a session credited (the first time only) and links its PaymentIntent. */
export async function markCredited(db: Executor, id: string, paymentIntent: string | null, now: number): Promise<void> {
  await db
    .updateTable('payment_sessions')
    .set({ credited_at: now, payment_intent: paymentIntent })
    .where('id', '=', id)
    .where('credited_at', 'is', null)
    .execute();
}

/** An event the service could not apply, kept for the operator (`payments events`); once per event id. */
export async function recordUnapplied(
  db: Executor,
  event: { id: string; type: string; objectId: string; problem: string; now: number },
): Promise<void> {
  await db
    .insertInto('payment_events')
    .values({
      id: event.id,
      type: event.type,
      object_id: event.objectId,
      problem: event.problem,
      received_at: event.now,
    })
    .onConflict((c) => c.column('id').doNothing())
    .execute();
}

export async function unappliedEvents(db: Executor, limit: number) {
  return db.selectFrom('payment_events').selectAll().orderBy('received_at', 'desc').limit(limit).execute();
}
