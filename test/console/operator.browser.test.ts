/**
 * The operator console in a real browser (a system Chromium, test/support/system-browser.ts,
 * driven by playwright-core), served by the real server with a deployments file whose first tier
 * is a loopback upstream that answers every submit 503: it cools down, and the tasks run on the
 * simulator's tier. An operator (promoted as `mediaforge users promote` does) finds a user by
 * email, adds credits with a note, sees the cooling deployment and its reason and the margin
 * chart; a user without the role sees none of it. The operator's sections come first; each
 * deployment state has its own colour (read from computed styles); a state change (a deployment
 * with no record that a task reaches) shows without a reload, and nothing is asked while the tab is
 * hidden (issue 37 point 8). With MEDIAFORGE_SCREENSHOTS=1 the screenshots
 * of docs/operating.md are written to docs/images/ (otherwise to test-artifacts/, so a run does not
 * change the tree).
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_OPERATOR, setRole } from '../../runtime/operator/operator-actions.js';
import { parseDeployments } from '../../runtime/routing/deployments-file.js';
import { bodyD, createTask, IMAGE, MODEL_D, MODEL_MINI } from '../http/helpers.js';

/** A model that takes a prompt alone, routed to the deployment without a declared cost. */
const MODEL_FREE = 'vendor_b/family_c-2.6/reference-to-video';
import { JobsProtocolServer } from '../../support/upstreams/jobs-protocol-server.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';
import { type ConfinedBrowser, openConfined } from '../support/browser.js';
import { signUp } from './support.js';

const ROOT = resolve(import.meta.dirname, '../..');
const SHOTS = process.env.MEDIAFORGE_SCREENSHOTS === '1' ? join(ROOT, 'docs/images') : join(ROOT, 'test-artifacts');
const OPERATOR = 'olive@example.com';
const PASSWORD = 'a long enough password';

describe('the operator console in a browser', () => {
  let t: TestService;
  let upstream: JobsProtocolServer;
  let confined: ConfinedBrowser;
  let page: Page;
  let apiKey: string;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    upstream = await new JobsProtocolServer({
      submit: () => ({ status: 503, msg: 'The service is temporarily unavailable.' }),
    }).start();
    const plan = parseDeployments(
      'deployments.yaml',
      [
        'upstreams:',
        `  flaky: { kind: jobs, baseUrl: "${upstream.baseUrl}" }`,
        '  local: { kind: simulator, cost: { perVideo: "0.02" } }',
        // No task goes to `spare` until the test sends one: `no record`, then `ok` (the console refreshing).
        '  spare: { kind: simulator }',
        // A deployment that declares no cost (the margin says so).
        '  free: { kind: simulator }',
        'models:',
        `  ${MODEL_D}:`,
        '    - { upstream: flaky, priority: 10 }',
        '    - { upstream: local, priority: 5 }',
        `  ${MODEL_MINI}: [{ upstream: spare }]`,
        `  ${MODEL_FREE}: [{ upstream: free }]`,
        'cooldown: { failures: 2, seconds: 600, singleTenant: true }',
      ].join('\n'),
      {},
    );
    t = await startTestService({ upstreamPollMs: 50 }, { deploymentsPlan: plan });
    // Three tasks of the one tenant: two failed submits cool `flaky` down for everyone; all three run on `local`.
    ({ apiKey } = await t.account(1000));
    for (let i = 0; i < 3; i++) {
      const created = await createTask(t, apiKey, bodyD(`a red kite over hills ${i}`));
      expect((await waitForTerminal(t, apiKey, created.body.data.taskId, 20_000)).state).toBe('succeeded');
    }
    // One more on a deployment that declares no cost (issue 37): the console says so rather than count it free.
    const free = await createTask(t, apiKey, {
      model: MODEL_FREE,
      input: { prompt: 'a kite over the hills', duration_seconds: 4 },
    });
    expect((await waitForTerminal(t, apiKey, free.body.data.taskId, 20_000)).state).toBe('succeeded');
    await signUp(t, 'grace@example.com');
    confined = await openConfined(new URL(t.url).origin);
    page = await confined.newPage();
  }, 120_000);

  /** The state badge of one deployment's row. */
  const badge = (deployment: string) =>
    page.locator('#operator-deployments-table tr', { hasText: deployment }).locator('[data-state]');

  afterAll(async () => {
    await confined?.close();
    await t?.close();
    await upstream?.close();
  });

  it('a user signed up in the console sees their account id and no operator section', async () => {
    await page.goto(`${t.url}/console`);
    await page.locator('#email').fill(OPERATOR);
    await page.locator('#password').fill(PASSWORD);
    await page.locator('#signup').click();
    await page.locator('body[data-ready="true"]').waitFor();
    expect(await page.locator('#account-id').innerText()).toMatch(/acct_/);
    expect(await page.locator('#operator-deployments').count()).toBe(0);
  }, 60_000);

  it('once promoted, sees the cooling deployment with its reason', async () => {
    await setRole(t.service.ctx.db, CLI_OPERATOR, OPERATOR, 'operator', Date.now());
    await page.reload();
    await page.locator('body[data-ready="true"]').waitFor();
    const flaky = page.locator('#operator-deployments-table tr', { hasText: 'flaky' });
    expect(await flaky.locator('[data-state]').getAttribute('data-state')).toBe('cooling');
    expect(await flaky.innerText()).toMatch(/503/);
    expect(await flaky.innerText()).toMatch(/server 2/);
    expect(
      await page
        .locator('#operator-deployments-table tr', { hasText: 'local' })
        .locator('[data-state]')
        .getAttribute('data-state'),
    ).toBe('ok');
    // No task went to `spare`: the database holds nothing of it, and the console says so, not `ok`.
    expect(await badge('spare').getAttribute('data-state')).toBe('no record');
    expect(await badge('spare').innerText()).toBe('no record');
    await page.locator('#operator-deployments').screenshot({ path: join(SHOTS, 'operator-deployments.png') });
  }, 60_000);

  // Issue 37 point 8: the operator sections were below the customer's (about 2,200 px down).
  it("shows the operator's sections first, above the account's own, the deployments in the first screen", async () => {
    // Positions in the page as an operator lands on it: scrolled to the top.
    await page.evaluate(() => window.scrollTo(0, 0));
    const box = async (selector: string) => (await page.locator(selector).boundingBox())!;
    const operatorBottom = Math.max(
      ...(await Promise.all(
        ['#operator-deployments', '#operator-margin', '#operator-accounts', '#operator-audit'].map(
          async (s) => (await box(s)).y + (await box(s)).height,
        ),
      )),
    );
    const customerTop = Math.min(
      ...(await Promise.all(['#balance', '#usage', '#keys', '#tasks'].map(async (s) => (await box(s)).y))),
    );
    expect(operatorBottom).toBeLessThanOrEqual(customerTop);
    expect((await box('#operator-deployments')).y).toBeLessThan(page.viewportSize()!.height);
  }, 60_000);

  // Issue 37 point 8: every state badge was the same pale blue.
  it('gives each deployment state its own colour, and a state it does not know an outlined badge of its own', async () => {
    const background = (state: string) => badge(state === 'cooling' ? 'flaky' : state === 'ok' ? 'local' : 'spare');
    const shown = await Promise.all(
      ['cooling', 'ok', 'no record'].map((s) => background(s).evaluate((e) => getComputedStyle(e).backgroundColor)),
    );
    expect(new Set(shown).size).toBe(3);
    // Every state of docs/operating.md (half-open included), and one no version of the page knows,
    // each in a badge as the page makes them, styled by the page's own stylesheet.
    const states = ['ok', 'degraded', 'cooling', 'half-open', 'full', 'down', 'no record', 'a-state-from-later'];
    const styles = await page.evaluate((list) => {
      const cell = document.querySelector('#operator-deployments-table td')!;
      return list.map((state) => {
        const span = document.createElement('span');
        span.className = 'badge deployment-state';
        span.dataset.state = state;
        span.textContent = state;
        cell.append(span);
        const style = getComputedStyle(span);
        const out = { state, background: style.backgroundColor, border: style.borderTopStyle };
        span.remove();
        return out;
      });
    }, states);
    expect(new Set(styles.map((x) => x.background)).size).toBe(states.length);
    expect(styles.find((x) => x.state === 'a-state-from-later')!.border).toBe('dashed');
    expect(styles.filter((x) => x.border === 'dashed').map((x) => x.state)).toEqual(['a-state-from-later']);
    // The badges as rendered have the same colours as the map says (cooling, ok, no record).
    expect(shown).toEqual(['cooling', 'ok', 'no record'].map((s) => styles.find((x) => x.state === s)!.background));
  }, 60_000);

  it('sees the margin chart: revenue and upstream cost of the simulator tier', async () => {
    await page.locator('#margin-chart canvas').waitFor();
    expect(await page.locator('#margin-chart').innerText()).toContain('Revenue');
    expect(await page.locator('#margin-totals').innerText()).toMatch(/4 tasks/);
    expect(await page.locator('#margin-totals').innerText()).toMatch(/upstream cost 0\.060000 USD/);
    // The task of the deployment without a declared cost is marked: its margin is not shown as whole revenue.
    expect(await page.locator('#margin-uncosted').innerText()).toBe(
      'Succeeded tasks without a declared cost: 1. They count 0, so the margin is overstated.',
    );
    await page.locator('#operator-margin').screenshot({ path: join(SHOTS, 'operator-margin.png') });
  }, 60_000);

  it('finds a user by email and adds credits with a note; the audit log shows it', async () => {
    await page.locator('#operator-query').fill('grace@');
    await page.locator('#operator-search').click();
    const row = page.locator('#operator-accounts-table tr', { hasText: 'grace@example.com (api)' });
    await row.waitFor();
    await row.locator('button').click();
    await page.locator('#grant-credits').fill('250');
    await page.locator('#grant-note').fill('welcome credits, ticket 7');
    await page.locator('#grant').click();
    await page.locator('#grant-done', { hasText: '250' }).waitFor();
    expect(await page.locator('#operator-balance').innerText()).toContain('Available 250');
    const entry = page.locator('#operator-audit-table tbody tr').first();
    await entry.filter({ hasText: 'credits.add' }).waitFor();
    expect(await entry.innerText()).toContain(OPERATOR);
    expect(await entry.innerText()).toContain('welcome credits, ticket 7');
    await page.locator('#operator-accounts').screenshot({ path: join(SHOTS, 'operator-accounts.png') });
    await page.locator('#operator-audit').screenshot({ path: join(SHOTS, 'operator-audit.png') });
    // grace sees the credits in her own console.
    const grace = await t.service.ctx.db.kysely
      .selectFrom('users')
      .select('account_id')
      .where('email', '=', 'grace@example.com')
      .executeTakeFirstOrThrow();
    expect((await t.wallet(grace.account_id)).available).toBe(250);
  }, 60_000);

  it('shows what an account owes and forgives it with a note; the audit log shows it', async () => {
    const grace = await t.service.ctx.db.kysely
      .selectFrom('users')
      .select('account_id')
      .where('email', '=', 'grace@example.com')
      .executeTakeFirstOrThrow();
    // A refund of 400 credits against the 250 she has: 150 owed (the ledger's reverse, as the payments webhook does).
    await t.service.ctx.db.kysely
      .transaction()
      .execute((trx) =>
        t.service.ctx.ledger.reverse(trx, 'refund', grace.account_id, 400, Date.now(), 'test:refund:grace'),
      );
    expect(await t.wallet(grace.account_id)).toMatchObject({ available: 0 });
    const row = page.locator('#operator-accounts-table tr', { hasText: 'grace@example.com (api)' });
    await row.locator('button').click();
    const forgive = page.locator('#forgive-debt');
    await forgive.filter({ hasText: '150' }).waitFor();
    await page.locator('#grant-note').fill('the refund was ours, ticket 9');
    await forgive.click();
    await forgive.click(); // the second press confirms
    await page.locator('#grant-done', { hasText: '150' }).waitFor();
    expect(await page.locator('#forgive-debt').count()).toBe(0);
    const entry = page.locator('#operator-audit-table tbody tr').first();
    await entry.filter({ hasText: 'debt.forgive' }).waitFor();
    expect(await entry.innerText()).toContain('the refund was ours, ticket 9');
    const owed = await t.service.ctx.db.kysely
      .selectFrom('wallets')
      .select('owed')
      .where('account_id', '=', grace.account_id)
      .executeTakeFirstOrThrow();
    expect(Number(owed.owed)).toBe(0);
    await t.checkLedger(grace.account_id);
  }, 60_000);

  it('shows a state change without a reload, and asks nothing while the tab is hidden', async () => {
    // A mark a reload would wipe.
    await page.evaluate(() => ((window as unknown as { mark: string }).mark = 'not reloaded'));
    const asked: string[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/console/api/operator/deployments')) asked.push(r.url());
    });
    const created = await createTask(t, apiKey, {
      model: MODEL_MINI,
      input: { prompt: 'a slow pan across a city, @Image1 as the skyline', reference_image_urls: [IMAGE] },
    });
    expect(created.status).toBe(202);
    expect((await waitForTerminal(t, apiKey, created.body.data.taskId, 20_000)).state).toBe('succeeded');
    // Its submit is counted in the database within two seconds; the page reads it at its next refresh.
    await page
      .locator('#operator-deployments-table tr', { hasText: 'spare' })
      .locator('[data-state="ok"]')
      .waitFor({ timeout: 20_000 });
    expect(await page.evaluate(() => (window as unknown as { mark?: string }).mark)).toBe('not reloaded');
    expect(asked.length).toBeGreaterThan(0);

    // The tab hidden (headless Chromium keeps every tab visible: the page is told as a browser tells it).
    const setHidden = (hidden: boolean) =>
      page.evaluate((value) => {
        Object.defineProperty(document, 'hidden', { configurable: true, get: () => value });
        Object.defineProperty(document, 'visibilityState', {
          configurable: true,
          get: () => (value ? 'hidden' : 'visible'),
        });
        document.dispatchEvent(new Event('visibilitychange'));
      }, hidden);
    await setHidden(true);
    // A refresh already under way may still land; after it, nothing for well over two periods (5 s).
    await page.waitForTimeout(1000);
    const before = asked.length;
    await page.waitForTimeout(12_000);
    expect(asked.length).toBe(before);
    const again = page.waitForRequest((r) => r.url().endsWith('/console/api/operator/deployments'), {
      timeout: 2000,
    });
    await setHidden(false);
    await again; // at once when the tab shows again, not at the end of a period
  }, 90_000);

  it('loaded nothing from another origin and raised no page error', () => {
    expect(confined.foreign).toEqual([]);
    expect(confined.problems).toEqual([]);
  });
});
