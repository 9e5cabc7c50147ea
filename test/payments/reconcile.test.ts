/**
 * Nothing lost when a webhook never comes (issue 39 point 6): `mediaforge payments reconcile`, run
 * as an operator runs it (a process of its own, on the service's database, the loopback Stripe API
 * through MEDIAFORGE_STRIPE_API_URL), lists the recent Checkout Sessions through stripe-node and
 * credits the paid ones the service made and did not credit, once: again, and the late webhook
 * after it, change nothing.
 */
import { describe, expect, it } from 'vitest';
import { mediaforgeCli } from '../support/cli-process.js';
import { buy, customer, deliver, event, paymentsWorldForFile, WEBHOOK_SECRET } from './support.js';

const world = paymentsWorldForFile();
const cli = (args: string[], env: Record<string, string>) => mediaforgeCli(world.t.config.dbUrl, args, env);

/** The settings of the running service, as its operator would export them for the command. */
const paymentsOn = () => ({
  MEDIAFORGE_STRIPE_SECRET_KEY: world.stripe.secretKey,
  MEDIAFORGE_STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
  MEDIAFORGE_STRIPE_API_URL: world.stripe.url,
  MEDIAFORGE_PUBLIC_URL: 'https://mediaforge.test.invalid',
});

async function reconcile(): Promise<{ seen: number; credited: number }> {
  const r = await cli(['payments', 'reconcile', '--json'], paymentsOn());
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

describe('mediaforge payments reconcile', () => {
  it('credits a paid session whose webhook was dropped, once; again, and the late webhook, change nothing', async () => {
    const { user, accountId } = await customer(world.t);
    const before = await world.t.wallet(accountId);
    const session = await buy(world, user, { pack: 'studio' }); // paid at Stripe; no event delivered

    const first = await reconcile();
    expect(first.credited).toBe(1);
    const after = await world.t.wallet(accountId);
    expect(after.purchased - before.purchased).toBe(5250); // 5,000 credits and the 250 bonus
    expect(after.available - before.available).toBe(5250);

    expect((await reconcile()).credited).toBe(0);
    const late = await deliver(world.t, event('checkout.session.completed', session));
    expect(late.status).toBe(200);
    expect(await world.t.wallet(accountId)).toEqual(after);
    await world.t.checkLedger(accountId);
  });

  it('leaves an unpaid session alone, and is audited with what it found', async () => {
    const { user, accountId } = await customer(world.t);
    const r = await user.call('POST', '/console/api/payments/checkout', { pack: 'starter' });
    expect(r.status).toBe(200); // a session made, never paid
    const before = await world.t.wallet(accountId);
    const found = await reconcile();
    expect(found.seen).toBeGreaterThanOrEqual(1);
    expect(found.credited).toBe(0);
    expect(await world.t.wallet(accountId)).toEqual(before);
    const audit = await cli(['audit', '--json'], {});
    const entries = JSON.parse(audit.stdout).entries.filter(
      (e: { action: string }) => e.action === 'payments.reconcile',
    );
    expect(entries[0].details).toEqual(found);
  });

  it('with payments off, says why and exits 1, crediting nothing', async () => {
    const r = await cli(['payments', 'reconcile'], {
      MEDIAFORGE_STRIPE_SECRET_KEY: '',
      MEDIAFORGE_STRIPE_WEBHOOK_SECRET: '',
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/payments off: MEDIAFORGE_STRIPE_SECRET_KEY and MEDIAFORGE_STRIPE_WEBHOOK_SECRET/);
    expect(r.stderr).not.toContain(world.stripe.secretKey);
  });
});
