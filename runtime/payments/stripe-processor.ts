import Stripe from 'stripe';
import type { PaymentsOn } from './payment-settings.js';
import {
  BadSignature,
  type ChargeRefund,
  type CheckoutRequest,
  type CheckoutSession,
  type PaymentEvent,
  type PaymentProcessor,
} from './payment-processor.js';

/** The metadata key naming the account on a session and on its PaymentIntent (so charges and disputes link back). */
const ACCOUNT_KEY = 'mediaforge_account';
const PACK_KEY = 'mediaforge_pack';

/** The Stripe adapter, through the official `stripe` package (requests, pagination, webhook signatures). */
export class StripeProcessor implements PaymentProcessor {
  private readonly stripe: Stripe;
  private readonly webhookSecrets: readonly string[];

  constructor(settings: PaymentsOn) {
    this.stripe = new Stripe(settings.secretKey, {
      ...(settings.apiOrigin ?? {}),
      maxNetworkRetries: 2,
      timeout: 20_000,
      telemetry: false,
      appInfo: { name: 'mediaforge' },
    });
    this.webhookSecrets = settings.webhookSecrets;
  }

  async createCheckout(request: CheckoutRequest): Promise<{ id: string; url: string }> {
    const { pack } = request;
    const metadata = { [ACCOUNT_KEY]: request.accountId, [PACK_KEY]: pack.name };
    const session = await this.stripe.checkout.sessions.create(
      {
        mode: 'payment',
        line_items: [
          {
            quantity: 1,
            price_data: {
              currency: pack.currency,
              unit_amount: pack.price,
              product_data: { name: `${pack.credits + pack.bonus} credits (${pack.name})` },
            },
          },
        ],
        client_reference_id: request.accountId,
        metadata,
        payment_intent_data: { metadata },
        success_url: request.successUrl,
        cancel_url: request.cancelUrl,
      },
      { idempotencyKey: request.attemptKey },
    );
    if (!session.url) throw new Error(`the checkout session ${session.id} has no url`);
    return { id: session.id, url: session.url };
  }

  verifyEvent(body: Buffer, signature: string | undefined): PaymentEvent {
    if (!signature) throw new BadSignature('no Stripe-Signature header');
    let event: Stripe.Event | undefined;
    for (const secret of this.webhookSecrets) {
      try {
        event = this.stripe.webhooks.constructEvent(body, signature, secret);
        break;
      } catch (error) {
        if (!(error instanceof Stripe.errors.StripeSignatureVerificationError)) throw new BadSignature('unreadable');
      }
    }
    if (!event) throw new BadSignature('no webhook secret verifies the signature');
    return toPaymentEvent(event);
  }

  async retrieveSession(id: string): Promise<CheckoutSession> {
    return toSession(await this.stripe.checkout.sessions.retrieve(id));
  }

  async *recentSessions(sinceSeconds: number): AsyncIterable<CheckoutSession> {
    for await (const session of this.stripe.checkout.sessions.list({ created: { gte: sinceSeconds }, limit: 100 }))
      yield toSession(session);
  }

  async refundsOf(chargeId: string): Promise<ChargeRefund[]> {
    const refunds: ChargeRefund[] = [];
    for await (const refund of this.stripe.refunds.list({ charge: chargeId, limit: 100 }))
      if (refund.status === 'succeeded')
        refunds.push({ id: refund.id, amount: refund.amount, createdAt: refund.created });
    return refunds;
  }
}

function idOf(value: string | { id: string } | null | undefined): string | null {
  if (!value) return null;
  return typeof value === 'string' ? value : value.id;
}

function toSession(session: Stripe.Checkout.Session): CheckoutSession {
  return {
    id: session.id,
    accountId: session.client_reference_id ?? null,
    paid: session.payment_status === 'paid',
    amountTotal: session.amount_total ?? null,
    currency: session.currency ?? null,
    paymentIntent: idOf(session.payment_intent),
    url: session.url ?? null,
    createdAt: session.created,
  };
}

function toPaymentEvent(event: Stripe.Event): PaymentEvent {
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded': {
      const session = toSession(event.data.object);
      // A completed session still waiting for a delayed payment (a bank debit) is credited when it succeeds.
      if (!session.paid) return { kind: 'ignored', eventId: event.id, type: event.type };
      return { kind: 'session_paid', eventId: event.id, session };
    }
    case 'charge.refunded':
      return {
        kind: 'charge_refunded',
        eventId: event.id,
        chargeId: event.data.object.id,
        paymentIntent: idOf(event.data.object.payment_intent),
      };
    case 'charge.dispute.created':
      return {
        kind: 'dispute_opened',
        eventId: event.id,
        disputeId: event.data.object.id,
        paymentIntent: idOf(event.data.object.payment_intent),
        amount: event.data.object.amount,
      };
    case 'charge.dispute.closed':
      if (event.data.object.status !== 'won') return { kind: 'ignored', eventId: event.id, type: event.type };
      return {
        kind: 'dispute_won',
        eventId: event.id,
        disputeId: event.data.object.id,
        paymentIntent: idOf(event.data.object.payment_intent),
      };
    default:
      return { kind: 'ignored', eventId: event.id, type: event.type };
  }
}
