import { describe, expect, it } from 'vitest';
import { bodyD } from '../http/helpers.js';
import { waitForTerminal } from '../support/service.js';
import { buy, customer, deliver, event, paymentsWorldForFile, PACK, PACK_CREDITS } from './support.js';

const world = paymentsWorldForFile();

/** A customer who bought one pack (credited), with an API key of that account. */
async function paidCustomer() {
  const { user, accountId } = await customer(world.t);
  const session = await buy(world, user, { pack: PACK.name });
  expect((await deliver(world.t, event('checkout.session.completed', session))).body.outcome).toBe('credited');
  const key = (await user.call('POST', '/console/api/keys', {})).body.data.apiKey as string;
  return { user, accountId, session, key };
}

const walletOf = (accountId: string) =>
  world.t.service.ctx.db.kysely
    .selectFrom('wallets')
    .selectAll()
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();

const kinds = async (accountId: string) =>
  (
    await world.t.service.ctx.db.kysely
      .selectFrom('ledger_entries')
      .select(['kind', 'amount'])
      .where('account_id', '=', accountId)
      .where('kind', 'not in', ['hold', 'settle', 'release'])
      .orderBy('id')
      .execute()
  ).map((r) => `${r.kind} ${r.amount}`);

describe('refunds, disputes and debts through the ledger (issue 39)', () => {
  it('applies partial refunds as deltas, once per refund id, summing to the whole pack', async () => {
    const { accountId, session } = await paidCustomer();
    const first = world.stripe.refund(session.id, 300);
    await deliver(world.t, event('charge.refunded', first));
    const second = world.stripe.refund(session.id, PACK.price - 300);
    await deliver(world.t, event('charge.refunded', second));
    // Replays of both events (Stripe resends) take nothing more.
    await deliver(world.t, event('charge.refunded', first));
    await deliver(world.t, event('charge.refunded', second));
    const share = Math.floor((PACK_CREDITS * 300) / PACK.price);
    expect(await kinds(accountId)).toEqual([
      `purchase ${PACK_CREDITS}`,
      `refund ${share}`,
      `refund ${PACK_CREDITS - share}`,
    ]);
    expect(await walletOf(accountId)).toMatchObject({ available: 0, purchased: PACK_CREDITS });
    await world.t.checkLedger(accountId);
  });

  it('a refund above what is available becomes a debt that refuses new work with 402 40202 naming it, until a purchase pays it', async () => {
    const { user, accountId, session, key } = await paidCustomer();
    const created = await world.t.call('POST', '/api/v1/jobs/createTask', { key, body: bodyD() });
    expect(created.status).toBe(202);
    const done = await waitForTerminal(world.t, key, created.body.data.taskId);
    const spent = (await walletOf(accountId)).spent;
    expect(spent).toBeGreaterThan(0);
    expect(done.state).toBe('succeeded');
    await deliver(world.t, event('charge.refunded', world.stripe.refund(session.id, PACK.price)));
    expect(await walletOf(accountId)).toMatchObject({ available: 0, owed: spent });
    expect(await kinds(accountId)).toEqual([
      `purchase ${PACK_CREDITS}`,
      `refund ${PACK_CREDITS - spent}`,
      `debt ${spent}`,
    ]);
    await world.t.checkLedger(accountId);
    for (const [path, body] of [
      ['/api/v1/jobs/createTask', bodyD()],
      ['/api/v1/jobs/quote', bodyD()],
    ] as const) {
      const refused = await world.t.call('POST', path, { key, body, headers: { 'accept-language': 'de' } });
      expect([refused.status, refused.body.code]).toEqual([402, 40202]);
      expect(refused.body.msg).toContain(String(spent));
      expect(refused.body.msg).toMatch(/schuldet/);
    }
    expect((await user.call('GET', '/console/api/payments/packs')).body.data.owed).toBe(spent);
    // A purchase pays the debt first; then work is accepted again.
    const again = await buy(world, user, { pack: PACK.name });
    await deliver(world.t, event('checkout.session.completed', again));
    expect(await walletOf(accountId)).toMatchObject({ available: PACK_CREDITS - spent, owed: 0 });
    expect(await kinds(accountId)).toEqual([
      `purchase ${PACK_CREDITS}`,
      `refund ${PACK_CREDITS - spent}`,
      `debt ${spent}`,
      `purchase ${PACK_CREDITS}`,
      `debt_paid ${spent}`,
    ]);
    expect((await world.t.call('POST', '/api/v1/jobs/createTask', { key, body: bodyD() })).status).toBe(202);
    await world.t.checkLedger(accountId);
  });

  it('a dispute takes the pack back; the dispute won gives it back, once', async () => {
    const { accountId, session } = await paidCustomer();
    await deliver(world.t, event('charge.dispute.created', world.stripe.dispute(session.id)));
    await deliver(world.t, event('charge.dispute.created', world.stripe.dispute(session.id)));
    expect(await walletOf(accountId)).toMatchObject({ available: 0, reversed: PACK_CREDITS, owed: 0 });
    // A dispute closed as lost changes nothing more; won gives the credits back.
    await deliver(world.t, event('charge.dispute.closed', world.stripe.dispute(session.id, 'lost')));
    expect((await walletOf(accountId)).available).toBe(0);
    const won = event('charge.dispute.closed', world.stripe.dispute(session.id, 'won'));
    await deliver(world.t, won);
    await deliver(world.t, won);
    expect(await walletOf(accountId)).toMatchObject({ available: PACK_CREDITS, reversed: 0, owed: 0 });
    expect(await kinds(accountId)).toEqual([
      `purchase ${PACK_CREDITS}`,
      `dispute ${PACK_CREDITS}`,
      `dispute_won ${PACK_CREDITS}`,
    ]);
    await world.t.checkLedger(accountId);
  });

  it('a refund of a payment it cannot link is recorded for the operator, and takes nothing', async () => {
    const { accountId } = await paidCustomer();
    const stray = { id: 'ch_test_stray', object: 'charge', payment_intent: 'pi_test_stray', amount: 100 };
    const r = await deliver(world.t, event('charge.refunded', stray));
    expect([r.status, r.body.outcome]).toEqual([200, 'unlinked']);
    expect((await walletOf(accountId)).available).toBe(PACK_CREDITS);
  });
});
