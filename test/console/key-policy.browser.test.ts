/**
 * Key policies in the console in a real browser (a system Chromium, test/support/system-browser.ts,
 * driven by playwright-core), served by the real server (issue 40, point 3): a customer whose
 * browser speaks German makes a key with a budget and a model pattern, sees its policy in the key's
 * row in German, edits its most tasks in flight and sees the change, and a refused part is shown
 * under its field; an operator (in English) edits the customer's key in the account view, and the
 * audit log shows key.policy.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_OPERATOR, setRole } from '../../runtime/operator/operator-actions.js';
import { confineToOrigin, launchBrowser } from '../support/browser.js';
import { startTestService, type TestService } from '../support/service.js';
import { userRow } from './support.js';

const CUSTOMER = 'grace-keys@example.com';
const OPERATOR = 'olive-keys@example.com';
const PASSWORD = 'a long enough password';

describe('key policies in the console, in a browser', () => {
  let t: TestService;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const foreign: string[] = [];
  const problems: string[] = [];
  let keyId: string;

  async function newPage(locale: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 1200 }, locale });
    contexts.push(context);
    await confineToOrigin(context, new URL(t.url).origin, foreign);
    const page = await context.newPage();
    page.on('pageerror', (error) => problems.push(`page error ${error.message}`));
    return page;
  }

  async function signUpIn(page: Page, email: string) {
    await page.goto(`${t.url}/console`);
    await page.locator('#email').fill(email);
    await page.locator('#password').fill(PASSWORD);
    await page.locator('#signup').click();
    await page.locator('body[data-ready="true"]').waitFor();
  }

  const keyRow = async (id: string) =>
    t.service.ctx.db.kysely
      .selectFrom('api_keys')
      .select(['account_id', 'budget_credits', 'budget_period', 'allowed_models', 'max_in_flight'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();

  beforeAll(async () => {
    t = await startTestService({}, { startWorker: false });
    browser = await launchBrowser();
  }, 120_000);

  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await t?.close();
  });

  it('a customer makes a key with a budget and a model pattern, sees it in the row (German), and edits it', async () => {
    const page = await newPage('de-DE');
    await signUpIn(page, CUSTOMER);
    expect(await page.locator('html').getAttribute('lang')).toBe('de');

    await page.locator('#new-key-policy-toggle').click();
    await page.locator('#new-key-policy-budget').fill('500');
    await page.locator('#new-key-policy-period').selectOption('month');
    await page.locator('#new-key-policy-models').fill('vendor_d/*');
    await page.locator('#create-key').click();
    await page.locator('#new-key').waitFor();

    const summary = page.locator('#keys-table [id^="policy-summary-"]').first();
    keyId = (await summary.getAttribute('id'))!.replace('policy-summary-', '');
    // The row's policy in the page's language: the budget used/credits per month and what is left, the models.
    expect(await summary.innerText()).toBe('Budget 0/500 pro Monat, 500 übrig · Modelle vendor_d/*');
    expect(await page.locator('#keys-table th').allInnerTexts()).toContain('Richtlinie');
    expect(await keyRow(keyId)).toMatchObject({ budget_period: 'month', allowed_models: '["vendor_d/*"]' });

    // Edit: the most tasks in flight; only what changed is sent, and the row shows it.
    const prefix = `policy-${keyId}`;
    await page.locator(`[id="${prefix}-edit"]`).click();
    expect(await page.locator(`[id="${prefix}-edit"]`).innerText()).toBe('Richtlinie bearbeiten');
    expect(await page.locator(`[id="${prefix}-budget"]`).inputValue()).toBe('500');
    await page.locator(`[id="${prefix}-maxTasksInFlight"]`).fill('2');
    await page.locator(`[id="${prefix}-save"]`).click();
    await page.locator(`[id="${prefix}-saved"]`, { hasText: 'Richtlinie gespeichert.' }).waitFor();
    expect(await page.locator(`[id="policy-summary-${keyId}"]`).innerText()).toBe(
      'Budget 0/500 pro Monat, 500 übrig · Modelle vendor_d/* · laufend 0/2',
    );
    const row = await keyRow(keyId);
    expect([Number(row.max_in_flight), Number(row.budget_credits)]).toEqual([2, 500]);

    // A refused part: the service's text (in German) under its field, nothing changed.
    await page.locator(`[id="${prefix}-edit"]`).click();
    await page.locator(`[id="${prefix}-networks"]`).fill('10.0.0.0/33');
    await page.locator(`[id="${prefix}-save"]`).click();
    const fieldError = page.locator(`[id="${prefix}-error-networks"]`);
    await fieldError.filter({ hasText: 'Ungültige Schlüsselrichtlinie' }).waitFor();
    expect(await page.locator(`[id="${prefix}-error-budget"]`).innerText()).toBe('');
    expect(await page.locator(`[id="${prefix}-saved"]`).innerText()).toBe('');
    expect(Number((await keyRow(keyId)).max_in_flight)).toBe(2);
    expect(problems).toEqual([]);
    expect(foreign).toEqual([]);
  }, 90_000);

  it("an operator edits the customer's key in the account view; the audit log shows key.policy", async () => {
    const page = await newPage('en-US');
    await signUpIn(page, OPERATOR);
    await setRole(t.service.ctx.db, CLI_OPERATOR, OPERATOR, 'operator', Date.now());
    await page.reload();
    await page.locator('body[data-ready="true"]').waitFor();

    const { account_id: accountId } = await userRow(t, CUSTOMER);
    await page.locator('#operator-query').fill('grace-keys@');
    await page.locator('#operator-search').click();
    await page.locator(`[id="open-${accountId}"]`).click();
    const prefix = `operator-policy-${keyId}`;
    const summary = page.locator(`[id="operator-policy-summary-${keyId}"]`);
    await summary.waitFor();
    expect(await summary.innerText()).toBe('budget 0/500 per month, 500 left · models vendor_d/* · in flight 0/2');

    await page.locator(`[id="${prefix}-edit"]`).click();
    await page.locator(`[id="${prefix}-maxTasksInFlight"]`).fill('5');
    await page.locator(`[id="${prefix}-models"]`).fill('');
    await page.locator(`[id="${prefix}-save"]`).click();
    await page.locator(`[id="${prefix}-saved"]`, { hasText: 'Policy saved.' }).waitFor();
    expect(await summary.innerText()).toBe('budget 0/500 per month, 500 left · in flight 0/5');
    const row = await keyRow(keyId);
    expect([Number(row.max_in_flight), row.allowed_models]).toEqual([5, null]);

    const audit = page.locator('#operator-audit-table tr', { hasText: 'key.policy' }).first();
    await audit.waitFor();
    expect(await audit.innerText()).toContain(OPERATOR);
    expect(await audit.innerText()).toContain(keyId);
    expect(problems).toEqual([]);
    expect(foreign).toEqual([]);
  }, 90_000);
});
