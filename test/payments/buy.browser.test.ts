/**
 * Buying credits in the console, in Chromium (issue 39 point 3): the packs are buttons under the
 * balance while payments are on; a press goes to the Checkout Session's page at the (loopback)
 * Stripe; back on the success page, the console says the credits arrive once the payment is
 * confirmed and shows them when the signed event has been delivered, without a reload.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CREDIT_PACKS } from '../../generated/credit-packs.js';
import { launchBrowser } from '../support/browser.js';
import { deliver, event, startPaymentsWorld, type PaymentsWorld } from './support.js';

const PACK = CREDIT_PACKS[0]!;

let world: PaymentsWorld;
let browser: Browser;
let page: Page;
const checkouts: string[] = [];

beforeAll(async () => {
  world = await startPaymentsWorld();
  browser = await launchBrowser();
  const context = await browser.newContext();
  const service = new URL(world.t.url).origin;
  const stripe = new URL(world.stripe.url).origin;
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if (url.origin === service) return route.continue();
    // The checkout page is Stripe's: here it is recorded and stands in as a blank page.
    if (url.origin === stripe) {
      checkouts.push(url.href);
      return route.fulfill({ status: 200, contentType: 'text/html', body: '<p>checkout</p>' });
    }
    return route.abort('blockedbyclient');
  });
  page = await context.newPage();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await world?.close();
});

describe('buying credits in the console', () => {
  it('a pack button leads to its Checkout Session; back on the success page, the credits show once the payment is confirmed', async () => {
    await page.goto(`${world.t.url}/console`);
    await page.locator('#email').fill('buyer@example.test');
    await page.locator('#password').fill('a long enough password');
    await page.locator('#signup').click();
    await page.locator('body[data-ready="true"]').waitFor();
    expect(await page.locator('#api-balance').innerText()).toBe('0');
    const buy = page.locator(`#buy-${PACK.name}`);
    // spec/credit-packs.yaml's first pack: 1,000 credits for 1000 US cents.
    expect(await buy.innerText()).toBe(`Buy ${PACK.credits + PACK.bonus} credits (${PACK.name}) for $10.00`);
    await buy.click();
    await page.waitForURL((url) => url.pathname.startsWith('/c/pay/'));
    expect(checkouts).toHaveLength(1);
    const sessionId = new URL(checkouts[0]!).pathname.split('/').pop()!;
    const session = world.stripe.sessions.get(sessionId)!;
    expect(session.success_url).toBe(
      'https://mediaforge.test.invalid/console?payment=success&session={CHECKOUT_SESSION_ID}',
    );

    // Paid at Stripe; the customer comes back (to this test's origin) before the event is delivered.
    world.stripe.pay(sessionId);
    await page.goto(`${world.t.url}/console?payment=success&session=${sessionId}`);
    await page.locator('body[data-ready="true"]').waitFor();
    await page.locator('#payments-pending').waitFor();
    expect(await page.locator('#api-balance').innerText()).toBe('0');
    const delivered = await deliver(world.t, event('checkout.session.completed', session));
    expect(delivered.body.outcome).toBe('credited');
    await page.locator('#api-balance', { hasText: String(PACK.credits + PACK.bonus) }).waitFor({ timeout: 10_000 });
  }, 60_000);

  it('says so when the checkout was canceled', async () => {
    await page.goto(`${world.t.url}/console?payment=canceled`);
    await page.locator('body[data-ready="true"]').waitFor();
    expect(await page.locator('#payments-canceled').innerText()).toContain('nothing was charged');
  }, 30_000);
});
