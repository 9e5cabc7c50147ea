/**
 * The operator console sets an account's price book (issue 40, point 4): the account view shows
 * the book and every name it may take, the operation shares the CLI's path (the same parse, the
 * same audit action `account.price_book`), the account's quote changes at once, an unknown book is
 * refused with 40043 in the caller's language naming the field, and a customer is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_OPERATOR, setRole } from '../../runtime/operator/operator-actions.js';
import { succeedTask } from '../../runtime/tasks/resolve-task.js';
import { bodyD, createTask, PRICE_D } from '../http/helpers.js';
import { mediaforgeJsonInProcess } from '../support/cli-process.js';
import { startTestService, type TestService } from '../support/service.js';
import { signUp, type ConsoleUser, userRow } from './support.js';

const OP = '/console/api/operator';

describe('the operator console: an account’s price book', () => {
  let t: TestService;
  let operator: ConsoleUser;
  let grace: ConsoleUser;
  let customer: { accountId: string; apiKey: string };

  const bookOf = async (accountId: string) =>
    (
      await t.service.ctx.db.kysely
        .selectFrom('accounts')
        .select('price_book')
        .where('id', '=', accountId)
        .executeTakeFirst()
    )?.price_book;
  const bookAudits = async () =>
    t.service.ctx.db.kysely
      .selectFrom('audit_log')
      .select(['actor', 'target', 'details'])
      .where('action', '=', 'account.price_book')
      .execute();
  const quote = async () =>
    (await t.call('POST', '/api/v1/jobs/quote', { key: customer.apiKey, body: bodyD() })).body.data.estimatedCredits;

  beforeAll(async () => {
    t = await startTestService({}, { startWorker: false });
    operator = await signUp(t, 'olive@example.com');
    grace = await signUp(t, 'grace@example.com');
    await setRole(t.service.ctx.db, CLI_OPERATOR, 'olive@example.com', 'operator', Date.now());
    customer = await t.account(10_000);
  });
  afterAll(async () => t?.close());

  it('shows the book, sets it with an audit row, and the account’s quote follows; default sets it back', async () => {
    const view = (await operator.call('GET', `${OP}/accounts/${customer.accountId}`)).body.data;
    expect(view.priceBook).toBe('default');
    expect(view.priceBooks).toContain('partner');
    expect(view.priceBooks.at(-1)).toBe('default');
    expect(await quote()).toBe(PRICE_D);

    const set = await operator.call('POST', `${OP}/accounts/${customer.accountId}/price-book`, { book: 'partner' });
    expect([set.status, set.body.data]).toEqual([
      200,
      { accountId: customer.accountId, priceBook: 'partner', previous: 'default' },
    ]);
    expect(await bookOf(customer.accountId)).toBe('partner');
    expect((await operator.call('GET', `${OP}/accounts/${customer.accountId}`)).body.data.priceBook).toBe('partner');
    const partnerQuote = await quote();
    expect(partnerQuote).toBeLessThan(PRICE_D);
    const olive = (await userRow(t, 'olive@example.com')).id;
    const audits = await bookAudits();
    expect(audits).toHaveLength(1);
    expect(audits[0]).toMatchObject({ actor: olive, target: customer.accountId });
    expect(JSON.parse(String(audits[0].details))).toEqual({ from: null, to: 'partner' });

    const back = await operator.call('POST', `${OP}/accounts/${customer.accountId}/price-book`, { book: 'default' });
    expect(back.body.data).toMatchObject({ priceBook: 'default', previous: 'partner' });
    expect(await bookOf(customer.accountId)).toBeNull();
    expect(await quote()).toBe(PRICE_D);
    expect(await bookAudits()).toHaveLength(2);
  });

  it('refuses an unknown book with 40043 in the caller’s language, naming the field, and changes nothing', async () => {
    await operator.call('POST', `${OP}/accounts/${customer.accountId}/price-book`, { book: 'partner' });
    const audits = (await bookAudits()).length;
    const r = await fetch(`${t.url}${OP}/accounts/${customer.accountId}/price-book`, {
      method: 'POST',
      headers: {
        cookie: operator.cookie,
        'x-csrf-token': operator.csrf,
        'content-type': 'application/json',
        'accept-language': 'de',
      },
      body: JSON.stringify({ book: 'gold' }),
    });
    const body = (await r.json()) as { code: number; msg: string; data: { param: string } };
    expect([r.status, body.code, body.data.param]).toEqual([400, 40043, 'book']);
    expect(body.msg).toContain('Preisliste');
    expect(await bookOf(customer.accountId)).toBe('partner');
    expect(await bookAudits()).toHaveLength(audits);
    const unknownAccount = await operator.call('POST', `${OP}/accounts/acct_nope/price-book`, { book: 'partner' });
    expect([unknownAccount.status, unknownAccount.body.data.reason]).toEqual([404, 'not_found']);
    expect(await bookAudits()).toHaveLength(audits);
  });

  it('refuses a customer’s session (403 not_operator), nothing changed', async () => {
    const before = [await bookOf(customer.accountId), (await bookAudits()).length];
    const graceAccount = (await grace.call('GET', '/console/api/session')).body.data.accountId;
    for (const target of [customer.accountId, graceAccount]) {
      const r = await grace.call('POST', `${OP}/accounts/${target}/price-book`, { book: 'default' });
      expect([r.status, r.body.data.reason]).toEqual([403, 'not_operator']);
    }
    expect([await bookOf(customer.accountId), (await bookAudits()).length]).toEqual(before);
    expect(await bookOf(graceAccount)).toBeNull();
  });

  it('the margin view answers the report by book and the below-cost warnings, as `report margin` does', async () => {
    // One task under partner (below its declared cost), one under the published prices.
    const published = await t.account(10_000);
    await operator.call('POST', `${OP}/accounts/${customer.accountId}/price-book`, { book: 'partner' });
    for (const key of [customer.apiKey, published.apiKey]) {
      const taskId = (await createTask(t, key, bodyD())).body.data.taskId as string;
      await t.service.ctx.db.kysely.updateTable('tasks').set({ deployment: 'sim' }).where('id', '=', taskId).execute();
      expect(
        await succeedTask(t.service.ctx, taskId, { outputs: [], outputSeconds: 5, upstreamCostMicros: 250_000 }),
      ).toBe(true);
    }
    const margin = await operator.call('GET', `${OP}/margin`);
    expect(margin.status).toBe(200);
    const books = Object.fromEntries(margin.body.data.books.map((b: { book: string }) => [b.book, b]));
    expect(books.partner).toMatchObject({ tasks: 1, marginUsd: '-0.020000' });
    expect(books.default).toMatchObject({ tasks: 1, revenueCredits: PRICE_D, marginUsd: '0.030000' });
    expect(margin.body.data.belowCost).toEqual([
      { book: 'partner', model: expect.any(String), tasks: 1, revenueUsd: '0.230000', upstreamCostUsd: '0.250000' },
    ]);
    const cli = await mediaforgeJsonInProcess(t.config.dbUrl, ['report', 'margin']);
    expect({
      books: margin.body.data.books,
      belowCost: margin.body.data.belowCost,
      totals: margin.body.data.totals,
    }).toEqual({
      books: cli.books,
      belowCost: cli.belowCost,
      totals: cli.totals,
    });
  });
});
