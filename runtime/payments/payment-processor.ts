/**
 * The payments port: what the service asks of a payment processor. Stripe is the first adapter
 * (stripe-processor.ts); the rest of the service sees only these shapes.
 */

/** A pack as sold: the snapshot a session is credited from. */
export interface SoldPack {
  name: string;
  credits: number;
  bonus: number;
  /** In the currency's minor units. */
  price: number;
  currency: string;
}

export interface CheckoutRequest {
  accountId: string;
  pack: SoldPack;
  /** One per attempt: a retried call creates the same session, never a second. */
  attemptKey: string;
  successUrl: string;
  cancelUrl: string;
}

/** A checkout session as the processor reports it. */
export interface CheckoutSession {
  id: string;
  /** The account the service named when it created the session. */
  accountId: string | null;
  paid: boolean;
  amountTotal: number | null;
  currency: string | null;
  paymentIntent: string | null;
  url: string | null;
  createdAt: number;
}

/** A refund of a charge: credits go back in proportion to its amount, once per id. */
export interface ChargeRefund {
  id: string;
  amount: number;
  createdAt: number;
}

/** What an incoming event means to the service (anything else is `ignored`). */
export type PaymentEvent =
  | { kind: 'session_paid'; eventId: string; session: CheckoutSession }
  | { kind: 'charge_refunded'; eventId: string; chargeId: string; paymentIntent: string | null }
  | { kind: 'dispute_opened'; eventId: string; disputeId: string; paymentIntent: string | null; amount: number }
  | { kind: 'dispute_won'; eventId: string; disputeId: string; paymentIntent: string | null }
  | { kind: 'ignored'; eventId: string; type: string };

export interface PaymentProcessor {
  createCheckout(request: CheckoutRequest): Promise<{ id: string; url: string }>;
  /** The event in `body` when `signature` is valid for it (now, with the default tolerance); else throws. */
  verifyEvent(body: Buffer, signature: string | undefined): PaymentEvent;
  retrieveSession(id: string): Promise<CheckoutSession>;
  /** Sessions created since `sinceSeconds` (Unix seconds), newest first, every page. */
  recentSessions(sinceSeconds: number): AsyncIterable<CheckoutSession>;
  /** Every refund of a charge. */
  refundsOf(chargeId: string): Promise<ChargeRefund[]>;
}

/** A signature or payload the processor's library refused: 400, nothing read or changed. */
export class BadSignature extends Error {}
