import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { CREDIT_PACKS } from '../../generated/credit-packs.js';
import { signUp, type ConsoleUser } from '../console/support.js';
import { startTestService, type TestService } from '../support/service.js';
import { signedEvent, startStripeApiServer, type StripeApiServer } from '../../support/stripe/stripe-api-server.js';

/** The pack the suites buy (the first of spec/), and the credits it brings with its bonus. */
export const PACK = CREDIT_PACKS[0]!;
export const PACK_CREDITS = PACK.credits + PACK.bonus;

export const WEBHOOK_SECRET = 'whsec_test_current';
export const OLD_WEBHOOK_SECRET = 'whsec_test_previous';

export interface PaymentsWorld {
  t: TestService;
  stripe: StripeApiServer;
  close(): Promise<void>;
}

/**
 * One payments world for the whole file: registers a beforeAll that starts it and an afterAll that
 * closes it. The object returned is filled in place by the beforeAll, so hooks and tests read
 * `world.t` and `world.stripe` as they would a world they started themselves.
 */
export function paymentsWorldForFile(): PaymentsWorld {
  const world = {} as PaymentsWorld;
  beforeAll(async () => {
    Object.assign(world, await startPaymentsWorld());
  });
  afterAll(async () => world.close?.());
  return world;
}

/** A service with payments on, its Stripe API the loopback server (support/stripe/); `options` as startTestService's (a clock, the worker, deployments). */
export async function startPaymentsWorld(
  config: Parameters<typeof startTestService>[0] = {},
  options: Parameters<typeof startTestService>[1] = {},
): Promise<PaymentsWorld> {
  const stripe = await startStripeApiServer();
  const t = await startTestService(
    {
      ...config,
      publicUrl: 'https://mediaforge.test.invalid',
      stripeSecretKey: stripe.secretKey,
      stripeWebhookSecrets: [WEBHOOK_SECRET, OLD_WEBHOOK_SECRET],
      stripeApiUrl: stripe.url,
    },
    options,
  );
  return {
    t,
    stripe,
    async close() {
      await t.close();
      await stripe.close();
    },
  };
}

/** Delivers an event to the webhook as Stripe does (raw JSON, Stripe-Signature). */
export async function deliver(t: TestService, event: { body: string; signature?: string }) {
  return t.call('POST', '/payments/stripe/webhook', {
    rawBody: event.body,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      ...(event.signature ? { 'stripe-signature': event.signature } : {}),
    },
  });
}

export function event(type: string, object: unknown, options: { secret?: string; timestamp?: number } = {}) {
  return signedEvent(type, object, options.secret ?? WEBHOOK_SECRET, options);
}

/** A signed-up console user and the id of its API account (a random address: no counter kept between files). */
export async function customer(t: TestService): Promise<{ user: ConsoleUser; accountId: string }> {
  const user = await signUp(t, `buyer-${randomUUID()}@example.test`);
  const session = await user.call('GET', '/console/api/session');
  return { user, accountId: session.body.data.accountId };
}

/** Buys `choice` through the console and pays it at the loopback Stripe: the paid session. */
export async function buy(world: PaymentsWorld, user: ConsoleUser, choice: { pack: string } | { credits: number }) {
  const r = await user.call('POST', '/console/api/payments/checkout', choice);
  if (r.status !== 200) throw new Error(`checkout ${r.status}: ${JSON.stringify(r.body)}`);
  const sessionId = new URL(r.body.data.url).pathname.split('/').pop()!;
  return world.stripe.pay(sessionId).session;
}
