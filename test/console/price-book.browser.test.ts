/**
 * An account's price book set in the operator console in a real browser (a system Chromium,
 * test/support/system-browser.ts, driven by playwright-core), served by the real server (issue 40,
 * point 4): the operator opens a customer's account, sees `default`, picks `partner` in the select,
 * and the customer's next quote is the book's; the audit log shows `account.price_book`.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCredits } from '../../runtime/accounts/accounts.js';
import { CLI_OPERATOR, setRole } from '../../runtime/operator/operator-actions.js';
import { bodyD, PRICE_D } from '../http/helpers.js';
import { type ConfinedBrowser, openConfined } from '../support/browser.js';
import { startTestService, type TestService } from '../support/service.js';
import { signUp } from './support.js';

const OPERATOR = 'olive@example.com';

describe('the operator sets a price book in a browser', () => {
  let t: TestService;
  let confined: ConfinedBrowser;
  let page: Page;
  let customer: { accountId: string; apiKey: string };
  const quote = async () =>
    (await t.call('POST', '/api/v1/jobs/quote', { key: customer.apiKey, body: bodyD() })).body.data.estimatedCredits;

  beforeAll(async () => {
    t = await startTestService({}, { startWorker: false });
    // A customer signed up in the console, so that the operator finds them by email.
    const user = await signUp(t, 'grace@example.com');
    const accountId = (await user.call('GET', '/console/api/session')).body.data.accountId as string;
    customer = { accountId, apiKey: (await user.call('POST', '/console/api/keys', {})).body.data.apiKey };
    await addCredits(t.service.ctx.db, accountId, 1000, Date.now());
    confined = await openConfined(new URL(t.url).origin);
    page = await confined.newPage();
  }, 120_000);

  afterAll(async () => {
    await confined?.close();
    await t?.close();
  });

  it('the operator picks partner for an account, and the account’s quote changes to the book’s', async () => {
    await page.goto(`${t.url}/console`);
    await page.locator('#email').fill(OPERATOR);
    await page.locator('#password').fill('a long enough password');
    await page.locator('#signup').click();
    await page.locator('body[data-ready="true"]').waitFor();
    await setRole(t.service.ctx.db, CLI_OPERATOR, OPERATOR, 'operator', Date.now());
    await page.reload();
    await page.locator('body[data-ready="true"]').waitFor();

    expect(await quote()).toBe(PRICE_D);
    await page.locator('#operator-query').fill('grace@');
    await page.locator('#operator-search').click();
    await page.locator(`[id="open-${customer.accountId}"]`).click();
    const select = page.locator('#operator-price-book');
    await select.waitFor();
    expect(await select.inputValue()).toBe('default');
    expect(await select.locator('option').allInnerTexts()).toContain('partner');
    await select.selectOption('partner');
    await page.locator('#set-price-book').click();
    await page.locator('#price-book-done', { hasText: 'partner' }).waitFor();
    expect(await page.locator('#operator-price-book').inputValue()).toBe('partner');

    const atBook = await quote();
    expect(atBook).toBeLessThan(PRICE_D);
    await page.locator('#operator-audit-table tr', { hasText: 'account.price_book' }).first().waitFor();
    expect(await page.locator('#operator-audit-table tr', { hasText: 'account.price_book' }).innerText()).toContain(
      customer.accountId,
    );
    expect(confined.problems).toEqual([]);
    expect(confined.foreign).toEqual([]);
  }, 90_000);
});
