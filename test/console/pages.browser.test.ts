/**
 * The playground and the console in a real browser (a system Chromium, test/support/system-browser.ts, driven by playwright-core),
 * served by the real server: sign up, 30 free credits, a generation to success with the video
 * playing and the balance down by the quote; the picker's "from" price, no quote of an untouched
 * form, Generate off with its reason past the balance; a PNG uploaded into a reference field by a
 * user who bought nothing (the playground's allowance) and run; a key
 * made in the console used against the API; the signing secret rotated and a resent delivery
 * verified with the new secret; an endpoint disabled, rotated and deleted; the pages in German after
 * the language setting changes, and in French before sign-in. No request may leave the service's
 * origin. Screenshots go to test-artifacts/.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogue } from '../../generated/catalogue.js';
import { codeMessage } from '../../generated/errors.js';
import { UI_TEXT } from '../../generated/ui-text.js';
import { addCredits } from '../../runtime/accounts/accounts.js';
import { signCallback } from '../../runtime/webhooks/signing.js';
import { type ConfinedBrowser, openConfined } from '../support/browser.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';
import { LOOPBACK, startReceiver, type Receiver } from '../webhooks/support.js';
import { png } from '../../support/media/fixtures.js';

const ARTIFACTS = join(resolve(import.meta.dirname, '../..'), 'test-artifacts');
const MODEL = 'vendor_d/family_d/text-to-video';
const REFERENCE_MODEL = 'vendor_d/family_d/reference-to-video';
const TEXT_FILE = { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('not a picture') };
const EMAIL = 'grace@example.com';

describe('the playground and the console in a browser', () => {
  let t: TestService;
  let confined: ConfinedBrowser;
  let receiver: Receiver;
  let page: Page;
  /** Every live quote the pages asked for, and its answer's status. */
  const quotes: { status: number }[] = [];

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    t = await startTestService({ ...LOOPBACK });
    receiver = await startReceiver();
    confined = await openConfined(new URL(t.url).origin, { flags: ['--autoplay-policy=no-user-gesture-required'] });
    page = await confined.newPage();
    page.on('response', (response) => {
      if (new URL(response.url()).pathname === '/playground/api/quote') quotes.push({ status: response.status() });
    });
  }, 120_000);

  afterAll(async () => {
    await confined?.close();
    await receiver?.close();
    await t?.close();
  });

  const user = () =>
    t.service.ctx.db.kysely.selectFrom('users').selectAll().where('email', '=', EMAIL).executeTakeFirstOrThrow();

  it('signs up on the playground and shows 30 free credits', async () => {
    await page.goto(`${t.url}/playground`);
    await page.locator('#email').fill(EMAIL);
    await page.locator('#password').fill('a long enough password');
    await page.screenshot({ path: join(ARTIFACTS, 'console-signup.png') });
    await page.locator('#signup').click();
    await page.locator('#balance').filter({ hasText: '30' }).waitFor();
    expect(await page.locator('#balance').innerText()).toBe('30');
  }, 30_000);

  it('opens on the model whose defaults the 30 free credits can run (by price), with no error before the user acts', async () => {
    // From the catalogue: every model a prompt alone can run, the most its defaults hold; the cheapest within 30.
    const runnable = [...catalogue.values()]
      .map((model) => ({ id: model.info.id, checked: model.validate({ prompt: 'x' }) }))
      .flatMap(({ id, checked }) =>
        checked.ok ? [{ id, max: catalogue.get(id)!.price(checked.value).maxCredits }] : [],
      )
      .filter(({ max }) => max <= 30)
      .sort((a, b) => a.max - b.max || (a.id < b.id ? -1 : 1));
    expect(runnable.length).toBeGreaterThan(0);
    await page.locator('#f-prompt').waitFor();
    expect(await page.locator('#model').inputValue()).toBe(runnable[0].id);
    // An untouched form is not quoted: no request, so no 400 for the prompt it does not have yet (issue 28, item 8).
    expect(quotes).toEqual([]);
    // Nothing typed yet: a hint where the price will be, no field error, Generate available.
    await expect
      .poll(() => page.locator('#quote').innerText(), { timeout: 5000 })
      .toBe(UI_TEXT.en['playground.startHint']);
    expect((await page.locator('.error').allInnerTexts()).filter((text) => text.trim() !== '')).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, 'playground-opening.png'), fullPage: true });
    // The defaults with a prompt quote within the balance, and Generate stays enabled.
    await page.locator('#f-prompt').fill('a lighthouse at dusk');
    await expect.poll(() => page.locator('#quote').getAttribute('data-credits'), { timeout: 5000 }).not.toBeNull();
    expect(Number(await page.locator('#quote').getAttribute('data-credits'))).toBeLessThanOrEqual(30);
    expect(await page.locator('#submit').isDisabled()).toBe(false);
    // Clearing the prompt is an act: now the error shows.
    await page.locator('#f-prompt').fill('');
    await expect.poll(() => page.locator('#err-prompt').innerText(), { timeout: 5000 }).not.toBe('');
  }, 30_000);

  it('says "from" what a task costs without a reference video, quotes nothing untouched, and turns Generate off with the reason past the balance (issue 28, item 8)', async () => {
    // A model whose 5 s clip costs 9 only with a reference video (its published minimum) and 19 without one.
    const mini = 'vendor_a/family_a-2.0-mini/reference-to-video';
    expect(catalogue.get(mini)!.info.pricing.minimumFor5sCredits).toBe(9);
    expect(await page.locator(`#model option[value="${mini}"]`).innerText()).toContain('from 19 credits / 5 s');
    // Another model, untouched: still nothing asked.
    const asked = quotes.length;
    const expensive = 'vendor_b/family_b-1.1/text-to-video';
    await page.locator('#model').selectOption(expensive);
    await page.locator('#f-prompt').waitFor();
    await page.waitForTimeout(400);
    expect(quotes.length).toBe(asked);
    expect(await page.locator('#quote').innerText()).toBe(UI_TEXT.en['playground.startHint']);
    // A prompt: the quote holds more than the 30 credits, so Generate is off and says why.
    await page.locator('#f-prompt').fill('a lighthouse at dusk');
    await expect.poll(() => page.locator('#quote').getAttribute('data-credits'), { timeout: 5000 }).not.toBeNull();
    const checked = catalogue.get(expensive)!.validate({ prompt: 'a lighthouse at dusk' });
    if (!checked.ok) throw new Error('the expensive model needs more than a prompt');
    const max = catalogue.get(expensive)!.price(checked.value).maxCredits;
    expect(max).toBeGreaterThan(30);
    expect(await page.locator('#submit').isDisabled()).toBe(true);
    expect(await page.locator('#submit-reason').innerText()).toBe(
      UI_TEXT.en['playground.cannotAfford'].replace('{max}', String(max)).replace('{available}', '30'),
    );
    await page.screenshot({ path: join(ARTIFACTS, 'playground-unaffordable.png'), fullPage: true });
  }, 30_000);

  it('generates the form from the schema, quotes live, shows field errors, runs to success and plays the video', async () => {
    await page.locator('#model').selectOption(MODEL);
    // Within the balance again: Generate on, no reason shown.
    await page.locator('#f-prompt').fill('a lighthouse at dusk');
    await expect.poll(() => page.locator('#submit').isDisabled(), { timeout: 5000 }).toBe(false);
    expect(await page.locator('#submit-reason').innerText()).toBe('');
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
    await page.locator('#state[data-state="succeeded"]').waitFor({ timeout: 20_000 });
    const video = page.locator('#video');
    await video.waitFor();
    const played = await video.evaluate(async (el: HTMLVideoElement) => {
      el.muted = true;
      await el.play();
      await new Promise((resolve) =>
        el.readyState >= 2 ? resolve(null) : el.addEventListener('loadeddata', resolve, { once: true }),
      );
      return {
        readyState: el.readyState,
        src: el.currentSrc,
        paused: el.paused,
        width: el.videoWidth,
        height: el.videoHeight,
        duration: el.duration,
      };
    });
    expect(played.readyState).toBeGreaterThanOrEqual(2);
    // Chromium decodes what the model promises: 16:9 at 768p is 1366x768 (spec/shared/output-sizes.yaml), 5 s.
    expect([played.width, played.height, played.duration]).toEqual([1366, 768, 5]);
    expect(played.paused).toBe(false);
    expect(new URL(played.src).origin).toBe(new URL(t.url).origin);
    expect(Number(await page.locator('#charge').getAttribute('data-credits'))).toBe(quoted);
    await expect.poll(() => page.locator('#balance').innerText()).toBe(String(30 - quoted));
    await page.screenshot({ path: join(ARTIFACTS, 'playground-result.png'), fullPage: true });
    await t.checkLedger((await user()).playground_account_id);
  }, 60_000);

  it('uploads a PNG into a reference field of the playground form and runs it to success', async () => {
    await page.locator('#model').selectOption(REFERENCE_MODEL);
    const picker = page.locator('#upload-reference_image_urls');
    expect(await picker.getAttribute('accept')).toBe('image/*');
    await page.locator('#f-prompt').fill('Picture 1 walks along a beach at dusk');
    // No purchases: the playground's allowance takes the file all the same (issue 28: "URLs or uploaded files").
    // The playground wallet is topped up for a second run.
    const { playground_account_id } = await user();
    await addCredits(t.service.ctx.db, playground_account_id, 100, Date.now());
    await picker.setInputFiles(TEXT_FILE);
    await expect
      .poll(() => page.locator('#upload-error-reference_image_urls').innerText(), { timeout: 5000 })
      .toBe(codeMessage('file_type_not_allowed', 'en'));
    await picker.setInputFiles({ name: 'fox.png', mimeType: 'image/png', buffer: png(400, 600, false) });
    await expect
      .poll(() => page.locator('#f-reference_image_urls').inputValue(), { timeout: 5000 })
      .toMatch(/^service:\/\/a\/a_[\w-]+$/);
    expect(await page.locator('#upload-error-reference_image_urls').innerText()).toBe('');
    expect(await page.locator('#upload-status-reference_image_urls').innerText()).toContain('fox.png');
    // The preview loads after the upload's answer: waited for, not read at once (a loaded machine).
    await expect
      .poll(
        () =>
          page
            .locator('#upload-status-reference_image_urls img')
            .evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth),
        { timeout: 10_000 },
      )
      .toBe(400);
    await expect.poll(() => page.locator('#quote').getAttribute('data-credits'), { timeout: 5000 }).toBe('28');
    await page.screenshot({ path: join(ARTIFACTS, 'playground-upload.png'), fullPage: true });

    await page.locator('#submit').click();
    await page.locator('#state[data-state="succeeded"]').waitFor({ timeout: 20_000 });
    await page.locator('#video').waitFor();
    expect(Number(await page.locator('#charge').getAttribute('data-credits'))).toBe(28);
    await expect
      .poll(() => page.locator('#balance').innerText())
      .toBe(String((await t.wallet(playground_account_id)).available));
    const task = await t.service.ctx.db.kysely
      .selectFrom('tasks')
      .select(['state', 'input_json'])
      .where('account_id', '=', playground_account_id)
      .orderBy('created_at', 'desc')
      .executeTakeFirstOrThrow();
    expect(task.state).toBe('succeeded');
    expect(task.input_json).toContain('service://a/');
    await t.checkLedger(playground_account_id);
  }, 60_000);

  it('creates a key in the console that works against the API', async () => {
    // The user buys 1000 credits (on the API account, not the playground's).
    await addCredits(t.service.ctx.db, (await user()).account_id, 1000, Date.now());
    await page.goto(`${t.url}/console`);
    await page.locator('body[data-ready="true"]').waitFor();
    expect(await page.locator('#playground-balance').innerText()).toBe(
      String((await t.wallet((await user()).playground_account_id)).available),
    );
    await page.locator('#create-key').click();
    const apiKey = await page.locator('#new-key').innerText();
    expect(apiKey).toMatch(/^sk-service-/);
    const response = await fetch(`${t.url}/api/v1/chat/credit`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(response.status).toBe(200);
    // The 1000 credits the user bought: the key spends from the API account.
    expect(((await response.json()) as { data: { available: number } }).data.available).toBe(1000);
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
    const created = await t.call('POST', '/api/v1/jobs/createTask', {
      key: apiKey,
      body: { model: MODEL, input: { prompt: 'a quiet harbour' }, callBackUrl: `${receiver.url}/hook` },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const taskId = created.body.data.taskId as string;
    await waitForTerminal(t, apiKey, taskId);
    await expect.poll(() => receiver.requests.length, { timeout: 10_000 }).toBe(1);
    const oldSecret = (
      await t.service.ctx.db.kysely
        .selectFrom('accounts')
        .select('webhook_secret')
        .where('id', '=', account_id)
        .executeTakeFirstOrThrow()
    ).webhook_secret;

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
    await expect
      .poll(async () => page.locator('#deliveries-table').innerText(), { timeout: 5000 })
      .toMatch(/Delivered\s+2/);
    await page.screenshot({ path: join(ARTIFACTS, 'console-webhooks.png'), fullPage: true });
  }, 60_000);

  it('disables an endpoint and shows it disabled, rotates its secret once, deletes it after a second click', async () => {
    await page.locator('#endpoint-url').fill(`${receiver.url}/events`);
    await page.locator('#add-endpoint').click();
    await page.locator('#endpoint-secret').waitFor();
    const endpointId = (
      await t.service.ctx.db.kysely
        .selectFrom('webhook_endpoints')
        .select('id')
        .where('account_id', '=', (await user()).account_id)
        .executeTakeFirstOrThrow()
    ).id;
    const state = page.locator(`[data-endpoint-state="${endpointId}"]`);
    expect(await state.innerText()).toBe('enabled');
    await page.locator(`#disable-${endpointId}`).click();
    await expect.poll(() => state.innerText()).toBe('disabled');
    expect(await page.locator(`#enable-${endpointId}`).count()).toBe(1);
    const row = await t.service.ctx.db.kysely
      .selectFrom('webhook_endpoints')
      .select(['disabled_at', 'secret'])
      .where('id', '=', endpointId)
      .executeTakeFirstOrThrow();
    expect(row.disabled_at).not.toBeNull();
    await page.screenshot({ path: join(ARTIFACTS, 'console-endpoint-disabled.png'), fullPage: true });

    await page.locator(`#rotate-${endpointId}`).click();
    await expect
      .poll(
        async () =>
          (await page.locator('#endpoint-secret').innerText()).startsWith('whsec_') &&
          (await page.locator('#endpoint-secret').innerText()) !== row.secret,
      )
      .toBe(true);
    const remove = page.locator(`#delete-${endpointId}`);
    await remove.click();
    expect(await remove.getAttribute('data-armed')).toBe('true');
    expect(await page.locator('#endpoints-table tbody tr').count()).toBe(1);
    await remove.click();
    await expect.poll(() => page.locator('#endpoints-table tbody tr').count()).toBe(0);
  }, 30_000);

  it('shows the usage chart and tasks, and switches the console to German with the language setting', async () => {
    await page.reload();
    await page.locator('body[data-ready="true"]').waitFor();
    expect(await page.locator('#usage-chart canvas').count()).toBeGreaterThan(0);
    await expect.poll(() => page.locator('#tasks-table tbody tr').count(), { timeout: 10_000 }).toBe(3);
    await page.screenshot({ path: join(ARTIFACTS, 'console-overview.png'), fullPage: true });
    await page.locator('#language').selectOption('de');
    await page.locator('#save-settings').click();
    await page.locator('html[lang="de"]').waitFor();
    await page.locator('body[data-ready="true"]').waitFor();
    const { account_id } = await user();
    const account = await t.service.ctx.db.kysely
      .selectFrom('accounts')
      .select(['language'])
      .where('id', '=', account_id)
      .executeTakeFirstOrThrow();
    expect(account.language).toBe('de');
    const de = UI_TEXT.de;
    expect(await page.locator('#balance h2').innerText()).toBe(de['console.balance']);
    expect(await page.locator('#settings h2').innerText()).toBe(de['console.settings']);
    expect(await page.locator('#save-settings').innerText()).toBe(de['settings.save']);
    expect(await page.locator('#rotate-secret').innerText()).toBe(de['webhooks.rotateSecret']);
    expect(await page.locator('#tasks-table [data-state="succeeded"]').first().innerText()).toBe(de['state.succeeded']);
    expect(await page.locator('#signout').innerText()).toBe(de['auth.signOut']);
    expect(await page.title()).toBe(`${de['nav.console']} · mediaforge`);
    await page.screenshot({ path: join(ARTIFACTS, 'console-de.png'), fullPage: true });
  }, 30_000);

  it('renders the console in a browser whose language Intl refuses (en-US@posix): the chart library no longer throws at load (issue 28, item 7)', async () => {
    const posix = await confined.browser.newContext({
      viewport: { width: 1280, height: 1000 },
      storageState: await confined.context.storageState(),
    });
    try {
      // What headless Chromium reports under LANG=C.UTF-8; new Intl.NumberFormat('en-US@posix') throws a RangeError.
      await posix.addInitScript(() => {
        Object.defineProperty(Navigator.prototype, 'language', { get: () => 'en-US@posix', configurable: true });
      });
      const errors: string[] = [];
      const console = await posix.newPage();
      console.on('pageerror', (error) => errors.push(error.message));
      await console.goto(`${t.url}/console`);
      // The browser's own value (the page may give uPlot another one on the navigator itself).
      expect(
        await console.evaluate(() =>
          Object.getOwnPropertyDescriptor(Navigator.prototype, 'language')?.get?.call(navigator),
        ),
      ).toBe('en-US@posix');
      await console.locator('body[data-ready="true"]').waitFor({ timeout: 10_000 });
      await expect.poll(() => console.locator('#usage-chart canvas').count()).toBeGreaterThan(0);
      expect(errors).toEqual([]);
    } finally {
      await posix.close();
    }
  }, 30_000);

  it('shows the playground in German too, with a bad file refused inline in German', async () => {
    await page.goto(`${t.url}/playground`);
    await page.locator('#model').selectOption(REFERENCE_MODEL);
    expect(await page.locator('#submit').innerText()).toBe(UI_TEXT.de['playground.generate']);
    await page.locator('#upload-reference_image_urls').setInputFiles(TEXT_FILE);
    await expect
      .poll(() => page.locator('#upload-error-reference_image_urls').innerText(), { timeout: 5000 })
      .toBe(codeMessage('file_type_not_allowed', 'de'));
    await page.screenshot({ path: join(ARTIFACTS, 'playground-de-upload-error.png'), fullPage: true });
  }, 30_000);

  it('before sign-in follows the browser language (French), and never leaves the origin', async () => {
    const french = await confined.browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'fr-FR' });
    try {
      const fr = await french.newPage();
      fr.on('pageerror', (error) => confined.problems.push(`page error ${error.message}`));
      fr.on('request', (request) => {
        if (new URL(request.url()).origin !== new URL(t.url).origin) confined.foreign.push(request.url());
      });
      await fr.goto(`${t.url}/playground`);
      await fr.locator('#auth h2').waitFor();
      expect(await fr.locator('html').getAttribute('lang')).toBe('fr');
      expect(await fr.locator('#auth h2').innerText()).toBe(UI_TEXT.fr['auth.title']);
      expect(await fr.locator('#signup').innerText()).toBe(UI_TEXT.fr['auth.signUp'].replace('{credits}', '30'));
      await fr.locator('#email').fill(EMAIL);
      await fr.locator('#password').fill('not the password');
      await fr.locator('#signin').click();
      // A sign-in pays one scrypt verification (about 100 ms, longer on a loaded machine).
      await expect
        .poll(() => fr.locator('#auth-error').innerText(), { timeout: 5000 })
        .toBe(codeMessage('console_wrong_credentials', 'fr'));
      await fr.screenshot({ path: join(ARTIFACTS, 'playground-signin-fr.png') });
    } finally {
      await french.close();
    }
    expect(confined.foreign).toEqual([]);
    expect(confined.problems).toEqual([]);
  }, 30_000);
});
