import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creditsAtPercent } from '../../catalogue-core/price-book.js';
import { failTask, succeedTask } from '../../runtime/tasks/resolve-task.js';
import { mediaforgeCli, mediaforgeJsonInProcess } from '../support/cli-process.js';
import { startTestService, type TestService } from '../support/service.js';
import { bodyD, createTask, MODEL_D, PRICE_D, recordInfo } from './helpers.js';

/**
 * Price books (issue 40): spec/price-books/partner.yaml prices vendor_d's and vendor_b/family_c-2.6's
 * models at 80 % of the published price. One account on it and one on the default book see their
 * own prices from quote, createTask's hold, retry, settlement, POST /v1/videos and GET /models; a
 * task settles at the book it was accepted under; the CLI refuses a book that does not exist.
 */

/** family_d at the defaults: 5.55 credits/s over 5 s. */
const RATE_D = 555;
const BOOK_D = creditsAtPercent(RATE_D, 5, 80); // 22.2 -> 23 (published: 27.75 -> 28)
const VIDEO_MODEL = 'vendor_b/family_c-2.6/reference-to-video';

const cli = (t: TestService, argv: string[]) => mediaforgeJsonInProcess(t.config.dbUrl, argv);

describe('price books', () => {
  let t: TestService;
  let partner: { accountId: string; apiKey: string };
  let published: { accountId: string; apiKey: string };
  beforeAll(async () => {
    t = await startTestService({}, { startWorker: false });
    partner = await t.account(10_000);
    published = await t.account(10_000);
    const set = await cli(t, ['accounts', 'set', '--account', partner.accountId, '--price-book', 'partner']);
    expect(set).toMatchObject({ accountId: partner.accountId, priceBook: 'partner' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('quote and createTask hold the book price; the default account the published one', async () => {
    expect(BOOK_D).toBe(23);
    for (const [who, want] of [
      [partner, BOOK_D],
      [published, PRICE_D],
    ] as const) {
      const quote = await t.call('POST', '/api/v1/jobs/quote', { key: who.apiKey, body: bodyD() });
      expect(quote.status).toBe(200);
      expect([quote.body.data.estimatedCredits, quote.body.data.maxCredits]).toEqual([want, want]);
      const before = await t.wallet(who.accountId);
      const created = await createTask(t, who.apiKey, {
        ...bodyD(),
        quoteId: quote.body.data.quoteId,
        expectedCredits: want,
      });
      expect(created.status).toBe(202);
      expect((await t.wallet(who.accountId)).held - before.held).toBe(want);
      await t.checkLedger(who.accountId);
    }
  });

  it('settlement charges the measured length at the book, and retry holds at it', async () => {
    const created = await createTask(t, partner.apiKey, bodyD());
    const taskId = created.body.data.taskId as string;
    // Measured 3 s: 5.55 × 3 × 80 % = 13.32 -> 14 (published: 16.65 -> 17).
    expect(await succeedTask(t.service.ctx, taskId, { outputs: [], outputSeconds: 3 })).toBe(true);
    const record = await recordInfo(t, partner.apiKey, taskId);
    expect(record.body.data.credits).toBe(creditsAtPercent(RATE_D, 3, 80));
    expect(record.body.data.credits).toBe(14);

    const failed = await createTask(t, partner.apiKey, bodyD('a fox that fails'));
    await failTask(t.service.ctx, failed.body.data.taskId, 'generation_failed', 'boom');
    const before = await t.wallet(partner.accountId);
    const retry = await t.call('POST', '/api/v1/jobs/retry', {
      key: partner.apiKey,
      body: { taskId: failed.body.data.taskId },
    });
    expect(retry.status).toBe(200);
    expect((await t.wallet(partner.accountId)).held - before.held).toBe(BOOK_D);
    await t.checkLedger(partner.accountId);
  });

  it('POST /v1/videos holds the book price', async () => {
    const body = { model: VIDEO_MODEL, prompt: 'a lighthouse at dusk', seconds: '4' };
    const held: number[] = [];
    for (const who of [partner, published]) {
      const before = await t.wallet(who.accountId);
      const video = await t.call('POST', '/v1/videos', { key: who.apiKey, body });
      expect(video.status).toBe(200);
      held.push((await t.wallet(who.accountId)).held - before.held);
    }
    const quote = await t.call('POST', '/api/v1/jobs/quote', {
      key: published.apiKey,
      body: { model: VIDEO_MODEL, input: { prompt: 'a lighthouse at dusk', duration: 4 } },
    });
    const rate = quote.body.data?.breakdown?.rateHundredths as number | undefined;
    expect(held[1]).toBeGreaterThan(held[0]);
    if (rate !== undefined)
      expect(held[0]).toBe(creditsAtPercent(rate, quote.body.data.breakdown.maxBillableSeconds, 80));
  });

  it('GET /api/v1/models shows the caller’s book', async () => {
    const models = async (key: string) => {
      const r = await t.call('GET', '/api/v1/models', { key });
      expect(r.status).toBe(200);
      return (
        r.body.data.items as { id: string; pricing: { rates: { rate: string }[]; minimumFor5sCredits: number } }[]
      ).find((m) => m.id === MODEL_D)!.pricing;
    };
    const [book, list] = [await models(partner.apiKey), await models(published.apiKey)];
    expect(list.rates.map((r) => r.rate)).toContain('5.55');
    expect(book.rates.map((r) => r.rate)).toContain('4.44');
    expect(book.minimumFor5sCredits).toBeLessThan(list.minimumFor5sCredits);
  });

  it('a book reassigned while a task runs: the task settles at the book it was accepted under', async () => {
    const { accountId, apiKey } = await t.account(10_000);
    await cli(t, ['accounts', 'set', '--account', accountId, '--price-book', 'partner']);
    const created = await createTask(t, apiKey, bodyD());
    await cli(t, ['accounts', 'set', '--account', accountId, '--price-book', 'default']);
    // The next request is priced at the published book at once (the key revision moved) ...
    const quote = await t.call('POST', '/api/v1/jobs/quote', { key: apiKey, body: bodyD() });
    expect(quote.body.data.maxCredits).toBe(PRICE_D);
    // ... but the running task is charged at its acceptance book.
    expect(await succeedTask(t.service.ctx, created.body.data.taskId, { outputs: [], outputSeconds: 5 })).toBe(true);
    expect((await recordInfo(t, apiKey, created.body.data.taskId)).body.data.credits).toBe(BOOK_D);
    expect(await t.wallet(accountId)).toMatchObject({ spent: BOOK_D, held: 0 });
    await t.checkLedger(accountId);
  });

  it('the CLI refuses an unknown book with the list; each change is an audit row', async () => {
    const { accountId } = await t.account(0);
    const refused = await mediaforgeCli(t.config.dbUrl, [
      'accounts',
      'set',
      '--account',
      accountId,
      '--price-book',
      'gold',
    ]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('no book "gold"; one of: partner, default');
    await cli(t, ['accounts', 'set', '--account', accountId, '--price-book', 'partner']);
    await cli(t, ['accounts', 'set', '--account', accountId, '--price-book', 'default']);
    const audit = await cli(t, ['audit', '--limit', '100']);
    const rows = (Array.isArray(audit) ? audit : (audit.entries ?? audit.items)).filter(
      (row: { target: string; action: string }) => row.target === accountId && row.action === 'account.price_book',
    );
    expect(rows.map((row: { details: unknown }) => row.details)).toEqual([
      { from: 'partner', to: null },
      { from: null, to: 'partner' },
    ]);
  });
});

describe('report margin by price book', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({}, { startWorker: false });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('groups by the book each task was accepted under and warns where a book charged below the declared cost', async () => {
    const onBook = await t.account(10_000);
    const onDefault = await t.account(10_000);
    await cli(t, ['accounts', 'set', '--account', onBook.accountId, '--price-book', 'partner']);
    const settled: string[] = [];
    for (const who of [onBook, onDefault]) {
      const created = await createTask(t, who.apiKey, bodyD());
      settled.push(created.body.data.taskId);
    }
    // Both ran on a deployment declaring 0.25 USD (25 credits): the book's 23 credits are below it, the published 28 not.
    for (const taskId of settled) {
      await t.service.ctx.db.kysely.updateTable('tasks').set({ deployment: 'sim' }).where('id', '=', taskId).execute();
      await succeedTask(t.service.ctx, taskId, { outputs: [], outputSeconds: 5, upstreamCostMicros: 250_000 });
    }
    const report = await cli(t, ['report', 'margin']);
    const books = Object.fromEntries(report.books.map((b: { book: string }) => [b.book, b]));
    expect(books.partner).toMatchObject({ tasks: 1, revenueCredits: BOOK_D, marginUsd: '-0.020000' });
    expect(books.default).toMatchObject({ tasks: 1, revenueCredits: PRICE_D, marginUsd: '0.030000' });
    expect(report.belowCost).toEqual([
      { book: 'partner', model: MODEL_D, tasks: 1, revenueUsd: '0.230000', upstreamCostUsd: '0.250000' },
    ]);
    const text = await mediaforgeCli(t.config.dbUrl, ['report', 'margin']);
    expect(text.stdout).toContain(`warning: book partner prices ${MODEL_D} below its declared upstream cost`);
  });
});
