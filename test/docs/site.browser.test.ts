/**
 * The documentation site in a real browser (a system Chromium, test/support/system-browser.ts, driven by playwright-core), served by
 * the real server: the index, a model page with its rate table, the live price calculator against
 * the quote endpoint, and the API reference. Every request the pages make is recorded: none may go
 * to another host. Screenshots are written to test-artifacts/ for review.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { confineToOrigin, launchBrowser } from '../support/browser.js';
import { startTestService, type TestService } from '../support/service.js';

const ROOT = resolve(import.meta.dirname, '../..');
const ARTIFACTS = join(ROOT, 'test-artifacts');
const MODEL = 'vendor_d/family_d/reference-to-video';

// Pages are rendered on the first request, and the API viewer works through a large OpenAPI 3.1
// document: on a busy two-core machine either can take tens of seconds.
describe('the documentation site in a browser', { timeout: 120_000 }, () => {
  let t: TestService;
  let browser: Browser;
  let context: BrowserContext;
  let apiKey: string;
  const requests: string[] = [];
  const blocked: string[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    t = await startTestService();
    apiKey = (await t.account(100_000)).apiKey;
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const origin = new URL(t.url).origin;
    // Record every request of every page; anything for another host is recorded and never sent.
    await confineToOrigin(context, origin, blocked, requests);
    context.on('request', (request) => {
      if (!requests.includes(request.url())) requests.push(request.url());
    });
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await t?.close();
  });

  async function open(path: string): Promise<Page> {
    const page = await context.newPage();
    page.on('pageerror', (error) => problems.push(`${path}: page error ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`${path}: console ${message.text()}`);
    });
    const response = await page.goto(`${t.url}${path}`, { waitUntil: 'networkidle', timeout: 90_000 });
    expect(response?.status(), path).toBe(200);
    return page;
  }

  async function quote(body: unknown) {
    const r = await t.call('POST', '/api/v1/jobs/quote', { key: apiKey, body });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.data as { estimatedCredits: number; estimatedCost: string; maxCredits: number; maxCharge: string };
  }

  async function calculatorShows(page: Page) {
    const text = (selector: string) => page.locator(selector).innerText();
    return {
      credits: Number(await text('#calc-credits')),
      usd: await text('#calc-usd'),
      maxCredits: Number(await text('#calc-max-credits')),
      maxUsd: await text('#calc-max-usd'),
      request: JSON.parse((await page.locator('#calc-request').textContent()) ?? 'null') as {
        model: string;
        input: Record<string, unknown>;
      },
    };
  }

  it('serves the index at /docs and links every model page', async () => {
    const page = await open('/docs');
    expect(new URL(page.url()).pathname).toBe('/docs/');
    await expect(page.locator('h1').innerText()).resolves.toBe('mediaforge models');
    const link = page.locator(`main a[href="models/${MODEL}.html"]`);
    await expect(link.count()).resolves.toBe(1);
    await page.screenshot({ path: join(ARTIFACTS, 'docs-index.png'), fullPage: false });
    await link.click();
    await page.waitForLoadState('networkidle');
    expect(new URL(page.url()).pathname).toBe(`/docs/models/${MODEL}.html`);
    await page.close();
  });

  it('shows a model page with its fields, limits, marker style and rate table', async () => {
    const page = await open(`/docs/models/${MODEL}.html`);
    await expect(page.locator('h1').innerText()).resolves.toBe('family_d, reference to video');
    for (const heading of ['Input fields', 'Reference limits', 'Prompt markers', 'Price']) {
      await expect(page.locator('main h2', { hasText: heading }).count(), heading).resolves.toBe(1);
    }
    await expect(page.locator('main').innerText()).resolves.toContain('picture-angle-video');
    // The rate table: the table of the Price section, one row per rate.
    const rateTable = page.locator('h2#price ~ .table-wrap table').first();
    await expect(rateTable.locator('thead').innerText()).resolves.toMatch(/resolution\s+Credits \/ s\s+USD \/ s/);
    const rows = await rateTable.locator('tbody tr').allInnerTexts();
    expect(rows.map((row) => row.split('\t').slice(0, 2))).toEqual([
      ['768p', '5.55'],
      ['2k', '8.7'],
    ]);
    await expect(page.locator('#price-calculator').getAttribute('data-ready')).resolves.toBe('true');
    await page.locator('#price-calculator').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(ARTIFACTS, 'docs-model-page.png'), fullPage: true });
    await page.close();
  });

  it('prices with the calculator exactly as POST /api/v1/jobs/quote does', async () => {
    const page = await open(`/docs/models/${MODEL}.html`);
    await page.locator('#price-calculator[data-ready="true"]').waitFor();
    // The defaults: 768p, 5 s -> 5.55 x 5 = 27.75, rounded up to 28 credits.
    const initial = await calculatorShows(page);
    expect(initial).toMatchObject({ credits: 28, usd: '0.28' });

    await page.locator('#calc-resolution').selectOption('2k');
    await page.locator('#calc-duration_seconds').fill('8');
    const shown = await calculatorShows(page);
    expect(shown.request.input).toMatchObject({ resolution: '2k', duration_seconds: 8 });
    const quoted = await quote(shown.request);
    expect(shown.credits).toBe(quoted.estimatedCredits);
    expect(shown.usd).toBe(quoted.estimatedCost);
    expect(shown.maxCredits).toBe(quoted.maxCredits);
    expect(shown).toMatchObject({ credits: 70, usd: '0.70' });
    // The same request written by hand gets the same quote: the calculator's body is no special case.
    const byHand = await quote({
      model: MODEL,
      input: {
        prompt: 'A cat jumps.',
        reference_image_urls: ['https://example.com/cat.png'],
        resolution: '2k',
        duration_seconds: 8,
      },
    });
    expect(byHand.estimatedCredits).toBe(shown.credits);

    await page.locator('#price-calculator').scrollIntoViewIfNeeded();
    await page.locator('#price-calculator').screenshot({ path: join(ARTIFACTS, 'docs-calculator-2k-8s.png') });
    await page.close();
  });

  it('matches the quote on models whose price depends on other options', async () => {
    const cases: { model: string; set: (page: Page) => Promise<void> }[] = [
      {
        // with_video (a reference clip), web search and a duration the model chooses
        model: 'vendor_a/family_a-2.0-mini/reference-to-video',
        set: async (page) => {
          await page.locator('#calc-resolution').selectOption('720p');
          await page.locator('#calc-reference_video_urls').fill('1');
          await page.locator('#calc-duration_seconds-auto').check();
          await page.locator('#calc-enable_web_search').check();
        },
      },
      {
        model: 'vendor_a/family_a-2.0-mini/reference-to-video',
        set: async (page) => {
          await page.locator('#calc-reference_video_urls').fill('2');
          await page.locator('#calc-duration_seconds').fill('11');
        },
      },
      {
        // reference clips add billable seconds; audio doubles the rate
        model: 'vendor_b/family_c-2.6-flash/reference-to-video',
        set: async (page) => {
          await page.locator('#calc-resolution').selectOption('1080p');
          await page.locator('#calc-generate_audio').check();
          await page.locator('#calc-reference_video_urls').fill('2');
          await page.locator('#calc-duration_seconds').fill('7');
        },
      },
      {
        model: 'vendor_e/q4-preview/reference-to-video',
        set: async (page) => {
          await page.locator('#calc-resolution').selectOption('4k');
          await page.locator('#calc-duration_seconds').fill('16');
        },
      },
    ];
    for (const { model, set } of cases) {
      const page = await open(`/docs/models/${model}.html`);
      await page.locator('#price-calculator[data-ready="true"]').waitFor();
      await set(page);
      const shown = await calculatorShows(page);
      expect(shown.request.model).toBe(model);
      const quoted = await quote(shown.request);
      expect({ model, credits: shown.credits, usd: shown.usd, max: shown.maxCredits, maxUsd: shown.maxUsd }).toEqual({
        model,
        credits: quoted.estimatedCredits,
        usd: quoted.estimatedCost,
        max: quoted.maxCredits,
        maxUsd: quoted.maxCharge,
      });
      await page.close();
    }
  });

  it('renders the API reference from the merged OpenAPI document with the bundled viewer', async () => {
    const page = await open('/docs/api/');
    await page.locator('#swagger-ui[data-ready="true"]').waitFor({ timeout: 90_000 });
    await expect(page.locator('.swagger-ui .info .title').innerText()).resolves.toContain('mediaforge');
    await page
      .locator('.opblock-summary-path', { hasText: '/api/v1/jobs/createTask' })
      .first()
      .waitFor({ timeout: 60_000 });
    await expect(
      page.locator('.opblock-summary-path', { hasText: '/api/v1/jobs/quote' }).count(),
    ).resolves.toBeGreaterThan(0);
    await page.screenshot({ path: join(ARTIFACTS, 'docs-api-reference.png'), fullPage: false });
    await page.close();
  });

  it('serves the merged OpenAPI document at /openapi.json and /openapi.yaml', async () => {
    const json = await fetch(`${t.url}/openapi.json`);
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await json.json()).toEqual(JSON.parse(readFileSync(join(ROOT, 'generated/openapi.json'), 'utf8')));
    const yaml = await fetch(`${t.url}/openapi.yaml`);
    expect(yaml.headers.get('content-type')).toMatch(/^application\/yaml/);
    expect(await yaml.text()).toBe(readFileSync(join(ROOT, 'generated/openapi.yaml'), 'utf8'));
  });

  it('made no request to another host, and no page reported an error', () => {
    const origin = new URL(t.url).origin;
    expect(requests.length).toBeGreaterThan(10);
    expect(requests.filter((url) => new URL(url).origin !== origin)).toEqual([]);
    expect(blocked).toEqual([]);
    // Each kind of file the pages need came from the test server.
    for (const asset of [
      '/docs/assets/site.css',
      '/docs/assets/calculator.js',
      '/docs/assets/swagger-ui-bundle.js',
      '/docs/openapi.json',
    ]) {
      expect(
        requests.some((url) => new URL(url).pathname === asset),
        asset,
      ).toBe(true);
    }
    expect(problems).toEqual([]);
  });
});
