import type { Ledger } from '../ledger/ledger.js';
import type { Db } from '../storage/dialect.js';
import type { CheckoutSession, PaymentEvent, PaymentProcessor } from './payment-processor.js';
import {
  markCredited,
  recordUnapplied,
  sessionOfPaymentIntent,
  storedSession,
  type StoredSession,
} from './payment-sessions.js';

/** What applying a paid session did. */
export type SessionOutcome = 'credited' | 'already' | 'unknown_session' | 'mismatch';

/**
 * Credits a paid session, exactly once: only a session the service created (payment_sessions),
 * for the account it named, with the amount and currency of the pack snapshot stored then; keyed on
 * the session id through the ledger's unique reference, so a replayed or concurrent duplicate (an
 * event 20 times, the webhook and reconciliation together) adds one purchase row.
 */
export async function creditPaidSession(
  db: Db,
  ledger: Ledger,
  session: CheckoutSession,
  now: number,
  eventId: string,
): Promise<SessionOutcome> {
  const stored = await storedSession(db.kysely, session.id);
  const problem = !stored
    ? 'unknown_session'
    : session.accountId !== stored.accountId ||
        session.amountTotal !== stored.price ||
        session.currency !== stored.currency
      ? 'mismatch'
      : undefined;
  if (problem || !stored) {
    await recordUnapplied(db.kysely, {
      id: eventId,
      type: 'session_paid',
      objectId: session.id,
      problem:
        problem === 'unknown_session'
          ? `a session this service did not create (account ${session.accountId ?? 'none'})`
          : `the session does not match what was sold (account, amount or currency)`,
      now,
    });
    return problem ?? 'unknown_session';
  }
  const credits = stored.credits + stored.bonus;
  const result = await db.kysely.transaction().execute(async (trx) => {
    const credited = await ledger.purchase(trx, stored.accountId, credits, now, {
      note: `${stored.name}: ${stored.price} ${stored.currency}`,
      byUserId: null,
      reference: `stripe:${session.id}`,
    });
    await markCredited(trx, session.id, session.paymentIntent, now);
    return credited;
  });
  return result.replayed ? 'already' : 'credited';
}

/** Credits a charge's session's pack in proportion to `amount` (minor units), rounding down; the whole pack for the whole price. */
function creditsFor(session: StoredSession, amount: number): number {
  const total = session.credits + session.bonus;
  return Math.min(total, Math.floor((total * amount) / session.price));
}

/** Applies one verified event. Anything it cannot link to a session is recorded for the operator, never a failure. */
export async function applyPaymentEvent(
  db: Db,
  ledger: Ledger,
  processor: PaymentProcessor,
  event: PaymentEvent,
  now: number,
): Promise<string> {
  switch (event.kind) {
    case 'ignored':
      return 'ignored';
    case 'session_paid':
      return creditPaidSession(db, ledger, event.session, now, event.eventId);
    case 'charge_refunded': {
      const session = event.paymentIntent ? await sessionOfPaymentIntent(db.kysely, event.paymentIntent) : undefined;
      if (!session) return unlinked(db, event.eventId, 'charge_refunded', event.chargeId, now);
      // Refunds are applied as deltas, once per refund id: each takes back the credits its share of the
      // cumulative refunded amount adds, so partial refunds sum to the whole pack for the whole price.
      const refunds = (await processor.refundsOf(event.chargeId)).sort(
        (a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1),
      );
      let cumulative = 0;
      for (const refund of refunds) {
        const before = creditsFor(session, cumulative);
        cumulative += refund.amount;
        const credits = creditsFor(session, cumulative) - before;
        await db.kysely
          .transaction()
          .execute((trx) => ledger.reverse(trx, 'refund', session.accountId, credits, now, `stripe:${refund.id}`));
      }
      return 'refunded';
    }
    case 'dispute_opened': {
      const session = event.paymentIntent ? await sessionOfPaymentIntent(db.kysely, event.paymentIntent) : undefined;
      if (!session) return unlinked(db, event.eventId, 'dispute_opened', event.disputeId, now);
      await db.kysely
        .transaction()
        .execute((trx) =>
          ledger.reverse(
            trx,
            'dispute',
            session.accountId,
            creditsFor(session, event.amount),
            now,
            `stripe:${event.disputeId}`,
          ),
        );
      return 'disputed';
    }
    case 'dispute_won': {
      const session = event.paymentIntent ? await sessionOfPaymentIntent(db.kysely, event.paymentIntent) : undefined;
      if (!session) return unlinked(db, event.eventId, 'dispute_won', event.disputeId, now);
      await db.kysely
        .transaction()
        .execute((trx) => ledger.restoreDispute(trx, session.accountId, now, `stripe:${event.disputeId}`));
      return 'dispute_won';
    }
  }
}

async function unlinked(db: Db, eventId: string, type: string, objectId: string, now: number): Promise<string> {
  await recordUnapplied(db.kysely, {
    id: eventId,
    type,
    objectId,
    problem: 'no credited session of this service has its payment',
    now,
  });
  return 'unlinked';
}
