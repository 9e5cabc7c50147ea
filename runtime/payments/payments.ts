import { randomUUID } from 'node:crypto';
import { creditPack, customPack } from '../../generated/credit-packs.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Db } from '../storage/dialect.js';
import { applyPaymentEvent, creditPaidSession } from './apply-payment.js';
import type { PaymentProcessor, SoldPack } from './payment-processor.js';
import type { PaymentsOn } from './payment-settings.js';
import { recordSession } from './payment-sessions.js';

/** Why a checkout cannot be made: the console answers each with its own business code. */
export type CheckoutRefusal = 'unknown_pack' | 'custom_unavailable' | 'custom_range' | 'custom_step';

/** How far back reconciliation lists sessions: Checkout Sessions expire after 24 hours at most. */
const RECONCILE_WINDOW_SECONDS = 48 * 3600;

/**
 * Payments switched on: checkouts, events, reconciliation. Built once by createService when
 * paymentSettings says on; `Context.payments` is undefined otherwise.
 */
export class Payments {
  constructor(
    readonly settings: PaymentsOn,
    readonly processor: PaymentProcessor,
    private readonly db: Db,
    private readonly ledger: Ledger,
  ) {}

  /** The pack a choice names (`{pack}` or `{credits}`), or why not. */
  packOf(choice: { pack?: string; credits?: number }): SoldPack | CheckoutRefusal {
    if (choice.pack !== undefined) return creditPack(choice.pack) ?? 'unknown_pack';
    const custom = customPack(choice.credits ?? Number.NaN);
    if (custom === 'unavailable') return 'custom_unavailable';
    if (custom === 'range') return 'custom_range';
    if (custom === 'step') return 'custom_step';
    return custom;
  }

  /** A Checkout Session for the account (one per attempt), recorded with a snapshot of the pack. */
  async checkout(accountId: string, pack: SoldPack, now: number): Promise<{ id: string; url: string }> {
    const origin = this.settings.returnOrigin;
    const session = await this.processor.createCheckout({
      accountId,
      pack,
      attemptKey: `checkout:${accountId}:${randomUUID()}`,
      successUrl: `${origin}/console?payment=success&session={CHECKOUT_SESSION_ID}`,
      cancelUrl: `${origin}/console?payment=canceled`,
    });
    await recordSession(this.db.kysely, { id: session.id, accountId, pack, now });
    return session;
  }

  /** Verifies and applies one webhook delivery; throws BadSignature before reading anything. */
  async receive(body: Buffer, signature: string | undefined, now: number): Promise<string> {
    const event = this.processor.verifyEvent(body, signature);
    return applyPaymentEvent(this.db, this.ledger, this.processor, event, now);
  }

  /**
   * Lists the sessions of the last 48 hours and credits the paid ones this service created, by the
   * same exactly-once path as the webhook (a session credited already changes nothing).
   */
  async reconcile(now: number): Promise<{ seen: number; credited: number }> {
    let seen = 0;
    let credited = 0;
    const since = Math.floor(now / 1000) - RECONCILE_WINDOW_SECONDS;
    for await (const session of this.processor.recentSessions(since)) {
      seen++;
      if (!session.paid) continue;
      const outcome = await creditPaidSession(this.db, this.ledger, session, now, `reconcile:${session.id}`);
      if (outcome === 'credited') credited++;
    }
    return { seen, credited };
  }
}
