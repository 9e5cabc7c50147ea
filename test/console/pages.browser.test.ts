/**
 * The playground and the console in a real browser (Debian's chromium driven by playwright-core),
 * served by the real server: sign up, 30 free credits, a generation to success with the video
 * playing and the balance down by the quote; a key made in the console used against the API; the
 * signing secret rotated and a resent delivery verified with the new secret. No request may leave
 * the service's origin. Screenshots go to test-artifacts/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCredits } from '../../runtime/accounts/accounts.js';
import { signCallback } from '../../runtime/webhooks/signing.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';
import { LOOPBACK, startReceiver, type Receiver } from '../webhooks/support.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(resolve(import.meta.dirname, '../..'), 'test-artifacts');
const MODEL = 'vendor_d/family_d/text-to-video';
const EMAIL = 'grace@example.com';

describe('the playground and the console in a browser', () => {
  let t: TestService;
  let browser: Browser;
  let context: BrowserContext;
  let receiver: Receiver;
  let page: Page;
  const foreign: string[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`Chromium is missing at ${CHROMIUM} (apt-get install -y chromium; .ci/run installs it).`);
    mkdirSync(ARTIFACTS, { recursive: true });
    t = await startTestService({ ...LOOPBACK });
    receiver = await startReceiver();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync', '--autoplay-policy=no-user-gesture-required'],
    });
    context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    const origin = new URL(t.url).origin;
    await context.route('**/*', async (route) => {
      const url = route.request().url();
      if (new URL(url).origin !== origin) {
        foreign.push(url);
        return route.abort('blockedbyclient');
      }
      return route.continue();
    });
    page = await context.newPage();
    page.on('pageerror', (error) => problems.push(`page error ${error.message}`));
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await receiver?.close();
    await t?.close();
  });

  const user = () => t.service.ctx.db.kysely.selectFrom('users').selectAll().where('email', '=', EMAIL).executeTakeFirstOrThrow();

  it('signs up on the playground and shows 30 free credits', async () => {
    await page.goto(`${t.url}/playground`);
    await page.locator('#email').fill(EMAIL);
    await page.locator('#password').fill('a long enough password');
    await page.screenshot({ path: join(ARTIFACTS, 'console-signup.png') });
    await page.locator('#signup').click();
    await page.locator('#balance').filter({ hasText: '30' }).waitFor();
    expect(await page.locator('#balance').innerText()).toBe('30');
  }, 30_000);

  it('generates the form from the schema, quotes live, shows field errors, runs to success and plays the video', async () => {
    await page.locator('#model').selectOption(MODEL);
    // Generated controls: an enum select with its default, a bounded integer, a checkbox.
    expect(await page.locator('#f-resolution').inputValue()).toBe('768p');
    expect(await page.locator('#f-duration_seconds').getAttribute('max')).toBe('15');
    expect(await page.locator('#f-enable_prompt_expansion').getAttribute('type')).toBe('checkbox');
    await page.locator('#f-prompt').fill('a lighthouse at dusk, waves rolling in');
    await page.locator('#f-duration_seconds').fill('99');
    await expect.poll(() => page.locator('#err-duration_seconds').innerText(), { timeout: 5000 }).not.toBe('');
    await page.screenshot({ path: join(ARTIFACTS, 'playground-field-error.png'), fullPage: true });
    await page.locator('#f-duration_seconds').fill('5');
    await expect.poll(() => page.locator('#quote').getAttribute('data-credits'), { timeout: 5000 }).toBe('28');
    expect(await page.locator('#err-duration_seconds').innerText()).toBe('');
    const quoted = Number(await page.locator('#quote').getAttribute('data-credits'));

    await page.locator('#submit').click();
    await page.locator('#state', { hasText: 'succeeded' }).waitFor({ timeout: 20_000 });
    const video = page.locator('#video');
    await video.waitFor();
    const played = await video.evaluate(async (el: HTMLVideoElement) => {
      el.muted = true;
      await el.play();
      await new Promise((resolve) => (el.readyState >= 2 ? resolve(null) : el.addEventListener('loadeddata', resolve, { once: true })));
      return { readyState: el.readyState, src: el.currentSrc, paused: el.paused };
    });
    expect(played.readyState).toBeGreaterThanOrEqual(2);
    expect(played.paused).toBe(false);
    expect(new URL(played.src).origin).toBe(new URL(t.url).origin);
    expect(Number(await page.locator('#charge').getAttribute('data-credits'))).toBe(quoted);
    await expect.poll(() => page.locator('#balance').innerText()).toBe(String(30 - quoted));
    await page.screenshot({ path: join(ARTIFACTS, 'playground-result.png'), fullPage: true });
    await t.checkLedger((await user()).playground_account_id);
  }, 60_000);

  it('creates a key in the console that works against the API', async () => {
    await page.goto(`${t.url}/console`);
    await page.locator('body[data-ready="true"]').waitFor();
    expect(await page.locator('#playground-balance').innerText()).toBe(String(30 - 28));
    await page.locator('#create-key').click();
    const apiKey = await page.locator('#new-key').innerText();
    expect(apiKey).toMatch(/^sk-service-/);
    const response = await fetch(`${t.url}/api/v1/chat/credit`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { data: { available: number } }).data.available).toBe(0);
    await page.locator('#team-name').fill('studio');
    await page.locator('#create-team-key').click();
    await page.locator('#keys-table', { hasText: 'team:studio' }).waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'console-keys.png'), fullPage: true });
  }, 30_000);

  it('rotates the signing secret and a resent delivery verifies with the new one', async () => {
    const { account_id } = await user();
    await addCredits(t.service.ctx.db, account_id, 1000, Date.now());
    await page.reload();
    await page.locator('body[data-ready="true"]').waitFor();
    await page.locator('#create-key').click();
    const apiKey = await page.locator('#new-key').innerText();
    const created = await t.call('POST', '/api/v1/jobs/createTask', { key: apiKey, body: { model: MODEL, input: { prompt: 'a quiet harbour' }, callBackUrl: `${receiver.url}/hook` } });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const taskId = created.body.data.taskId as string;
    await waitForTerminal(t, apiKey, taskId);
    await expect.poll(() => receiver.requests.length, { timeout: 10_000 }).toBe(1);
    const oldSecret = (await t.service.ctx.db.kysely.selectFrom('accounts').select('webhook_secret').where('id', '=', account_id).executeTakeFirstOrThrow()).webhook_secret;

    await page.locator('#rotate-secret').click();
    const newSecret = await page.locator('#new-secret').innerText();
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(oldSecret);
    await page.locator('#refresh-deliveries').click();
    const resend = page.locator('#deliveries-table button[id^="resend-"]').first();
    await resend.waitFor();
    await resend.click();
    await expect.poll(() => receiver.requests.length, { timeout: 10_000 }).toBe(2);
    const [first, second] = receiver.requests;
    expect(second.body).toBe(first.body);
    const timestamp = Number(second.headers['x-webhook-timestamp']);
    expect(second.headers['x-webhook-signature']).toBe(signCallback(newSecret, taskId, timestamp, second.body));
    expect(second.headers['x-webhook-signature']).not.toBe(signCallback(oldSecret, taskId, timestamp, second.body));
    await page.locator('#refresh-deliveries').click();
    await expect.poll(async () => page.locator('#deliveries-table').innerText(), { timeout: 5000 }).toMatch(/delivered\s+2/);
    await page.screenshot({ path: join(ARTIFACTS, 'console-webhooks.png'), fullPage: true });
  }, 60_000);

  it('shows the usage chart and tasks, saves settings, and never leaves the origin', async () => {
    await page.reload();
    await page.locator('body[data-ready="true"]').waitFor();
    expect(await page.locator('#usage-chart canvas').count()).toBeGreaterThan(0);
    expect(await page.locator('#tasks-table tbody tr').count()).toBe(2);
    await page.locator('#language').selectOption('ja');
    await page.locator('#save-settings').click();
    await page.locator('#settings-saved', { hasText: 'Saved' }).waitFor();
    const { account_id } = await user();
    const account = await t.service.ctx.db.kysely.selectFrom('accounts').select(['language']).where('id', '=', account_id).executeTakeFirstOrThrow();
    expect(account.language).toBe('ja');
    await page.screenshot({ path: join(ARTIFACTS, 'console-overview.png'), fullPage: true });
    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);
  }, 30_000);
});
