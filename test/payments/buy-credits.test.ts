import { describe, expect, it } from 'vitest';
import { CREDIT_PACKS, CUSTOM_AMOUNT } from '../../generated/credit-packs.js';
import { signUp } from '../console/support.js';
import { startTestService } from '../support/service.js';
import {
  buy,
  customer,
  deliver,
  event,
  OLD_WEBHOOK_SECRET,
  paymentsWorldForFile,
  PACK,
  PACK_CREDITS,
} from './support.js';

const world = paymentsWorldForFile();

const ledgerRows = (accountId: string) =>
  world.t.service.ctx.db.kysely
    .selectFrom('ledger_entries')
    .select(['kind', 'amount', 'reference'])
    .where('account_id', '=', accountId)
    .orderBy('id')
    .execute();

describe('buying credits through Stripe Checkout (issue 39)', () => {
  it('a console checkout creates a payment-mode session priced from the pack, for the account, with return links on the public URL', async () => {
    const { user, accountId } = await customer(world.t);
    const packs = await user.call('GET', '/console/api/payments/packs');
    expect(packs.body.data).toMatchObject({ enabled: true, owed: 0 });
    expect(packs.body.data.packs).toEqual(CREDIT_PACKS.map((p) => ({ ...p })));
    const r = await user.call('POST', '/console/api/payments/checkout', { pack: PACK.name });
    expect(r.status).toBe(200);
    expect(r.body.data.url).toMatch(new RegExp(`^${world.stripe.url}/c/pay/cs_test_`));
    const session = world.stripe.sessions.get(new URL(r.body.data.url).pathname.split('/').pop()!)!;
    expect(session).toMatchObject({
      mode: 'payment',
      client_reference_id: accountId,
      amount_total: PACK.price,
      currency: PACK.currency,
      metadata: { mediaforge_account: accountId, mediaforge_pack: PACK.name },
      payment_intent_metadata: { mediaforge_account: accountId, mediaforge_pack: PACK.name },
    });
    expect(session.success_url).toMatch(/^https:\/\/mediaforge\.test\.invalid\/console\?payment=success/);
    expect(session.cancel_url).toBe('https://mediaforge.test.invalid/console?payment=canceled');
    // An idempotency key per attempt, sent by stripe-node as the header.
    const created = world.stripe.requests.filter((q) => q.method === 'POST' && q.path === '/v1/checkout/sessions');
    expect(created.at(-1)?.idempotencyKey).toMatch(/^checkout:/);
    // Nothing is credited before the payment is confirmed.
    expect(await world.t.wallet(accountId)).toMatchObject({ available: 0, purchased: 0 });
  });

  it.each([
    ['an unknown pack', { body: { pack: 'no-such-pack' }, code: 'unknown_pack' }],
    ['a custom amount below the minimum', { body: { credits: CUSTOM_AMOUNT!.minCredits - 1 }, code: 'custom_amount' }],
    ['a custom amount above the maximum', { body: { credits: CUSTOM_AMOUNT!.maxCredits + 1 }, code: 'custom_amount' }],
    ['both a pack and credits', { body: { pack: PACK.name, credits: 1000 }, code: 'invalid_request' }],
    ['neither', { body: {}, code: 'invalid_request' }],
  ])('refuses %s with its code and creates no session', async (_name, { body, code }) => {
    const { user } = await customer(world.t);
    const before = world.stripe.sessions.size;
    const r = await user.call('POST', '/console/api/payments/checkout', body);
    expect(r.status).toBe(400);
    expect(r.body.data.reason).toBe(code);
    expect(world.stripe.sessions.size).toBe(before);
  });

  it('credits a paid session once, however often and however concurrently its event arrives', async () => {
    const { user, accountId } = await customer(world.t);
    const session = await buy(world, user, { pack: PACK.name });
    const completed = event('checkout.session.completed', session);
    const answers = await Promise.all(Array.from({ length: 20 }, () => deliver(world.t, completed)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    // Another event for the same session (Stripe's async success) changes nothing either.
    expect((await deliver(world.t, event('checkout.session.async_payment_succeeded', session))).status).toBe(200);
    expect(await world.t.wallet(accountId)).toMatchObject({ available: PACK_CREDITS, purchased: PACK_CREDITS });
    expect(await ledgerRows(accountId)).toEqual([
      { kind: 'purchase', amount: PACK_CREDITS, reference: `stripe:${session.id}` },
    ]);
    await world.t.checkLedger(accountId);
  });

  it('credits a custom amount at its price', async () => {
    const { user, accountId } = await customer(world.t);
    const credits = CUSTOM_AMOUNT!.minCredits;
    const session = await buy(world, user, { credits });
    expect(session.amount_total).toBe(credits / CUSTOM_AMOUNT!.creditsPerMinorUnit);
    await deliver(world.t, event('checkout.session.completed', session));
    expect((await world.t.wallet(accountId)).purchased).toBe(credits);
  });

  it('accepts every listed webhook secret (a rotation), and an event signed with the older one credits as well', async () => {
    const { user, accountId } = await customer(world.t);
    const session = await buy(world, user, { pack: PACK.name });
    const r = await deliver(world.t, event('checkout.session.completed', session, { secret: OLD_WEBHOOK_SECRET }));
    expect(r.status).toBe(200);
    expect((await world.t.wallet(accountId)).available).toBe(PACK_CREDITS);
  });

  it.each([
    ['no signature', (e: { body: string; signature: string }) => ({ body: e.body })],
    ['a signature by another secret', () => event('checkout.session.completed', {}, { secret: 'whsec_other' })],
    [
      'a stale timestamp (outside the 300 s tolerance)',
      (e: { body: string }) => ({
        body: e.body,
        signature: event('x', {}, { timestamp: Math.floor(Date.now() / 1000) - 3600 }).signature,
      }),
    ],
    [
      'a body changed after signing',
      (e: { body: string; signature: string }) => ({
        body: e.body.replace('"paid"', '"paid" '),
        signature: e.signature,
      }),
    ],
    [
      'a stale event signed whole',
      (e: { body: string }) =>
        event('checkout.session.completed', JSON.parse(e.body).data.object, {
          timestamp: Math.floor(Date.now() / 1000) - 3600,
        }),
    ],
  ])('answers 400 to %s and changes nothing', async (_name, tamper) => {
    const { user, accountId } = await customer(world.t);
    const session = await buy(world, user, { pack: PACK.name });
    const good = event('checkout.session.completed', session);
    const r = await deliver(world.t, tamper(good) as { body: string; signature?: string });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe(40042);
    expect(await world.t.wallet(accountId)).toMatchObject({ available: 0, purchased: 0 });
  });

  it('answers 2xx to an event type it does not handle, and to an unpaid completed session, crediting nothing', async () => {
    const { user, accountId } = await customer(world.t);
    const r = await user.call('POST', '/console/api/payments/checkout', { pack: PACK.name });
    const session = world.stripe.sessions.get(new URL(r.body.data.url).pathname.split('/').pop()!)!;
    expect((await deliver(world.t, event('customer.created', { id: 'cus_test_1', object: 'customer' }))).status).toBe(
      200,
    );
    expect((await deliver(world.t, event('checkout.session.completed', session))).body.outcome).toBe('ignored');
    expect((await world.t.wallet(accountId)).available).toBe(0);
  });

  it('records a paid session it did not create (an unknown account) for the operator and credits nothing', async () => {
    const { user, accountId } = await customer(world.t);
    const session = await buy(world, user, { pack: PACK.name });
    const stranger = { ...session, id: 'cs_test_not_ours', client_reference_id: 'acct_unknown' };
    const forged = { ...session, amount_total: session.amount_total * 100 };
    const strangerEvent = event('checkout.session.completed', stranger);
    expect((await deliver(world.t, strangerEvent)).status).toBe(200);
    expect((await deliver(world.t, event('checkout.session.completed', forged))).body.outcome).toBe('mismatch');
    expect((await world.t.wallet(accountId)).available).toBe(0);
    const recorded = await world.t.service.ctx.db.kysely
      .selectFrom('payment_events')
      .selectAll()
      .where('object_id', '=', 'cs_test_not_ours')
      .execute();
    expect(recorded).toEqual([
      expect.objectContaining({ id: strangerEvent.id, problem: expect.stringContaining('acct_unknown') }),
    ]);
  });
});

describe('payments off (no Stripe secrets)', () => {
  it('shows no packs, refuses checkout (40420 payments_off) and has no webhook', async () => {
    const t = await startTestService();
    try {
      const user = await signUp(t, `off-${Date.now()}@example.test`);
      expect((await user.call('GET', '/console/api/payments/packs')).body.data).toMatchObject({
        enabled: false,
        packs: [],
        custom: null,
      });
      const r = await user.call('POST', '/console/api/payments/checkout', { pack: PACK.name });
      expect([r.status, r.body.data.reason]).toEqual([404, 'payments_off']);
      expect((await t.call('POST', '/payments/stripe/webhook', { rawBody: '{}' })).status).toBe(404);
    } finally {
      await t.close();
    }
  });
});
