/**
 * Settlement under a price book through the real worker (issue 40, point 4): a task accepted under
 * spec/price-books/partner.yaml is submitted to the simulator by the worker and settles at the
 * book's price; an account moved to another book while its task runs still settles at the book the
 * task was accepted under; the ledger agrees with the wallet after each.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setAccountPriceBook } from '../../runtime/accounts/price-book.js';
import { CLI_OPERATOR } from '../../runtime/operator/operator-actions.js';
import { bodyD, createTask, PRICE_D } from '../http/helpers.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';

describe('settlement under a price book, by the worker', () => {
  let t: TestService;
  const book = (accountId: string, name: string | null) =>
    setAccountPriceBook(t.service.ctx.db, CLI_OPERATOR, accountId, name, Date.now());
  const quote = async (key: string) =>
    (await t.call('POST', '/api/v1/jobs/quote', { key, body: bodyD() })).body.data.estimatedCredits as number;
  const stateOf = async (key: string, taskId: string) =>
    (await t.call('GET', `/api/v1/jobs/recordInfo?taskId=${encodeURIComponent(taskId)}`, { key })).body.data.state;

  beforeAll(async () => {
    // A slower simulator (3 s): the test moves the account to another book while its task runs, and
    // a loaded machine must still see it running.
    t = await startTestService({ simulatorLatencyMs: 3000 });
  });
  afterAll(async () => t?.close());

  it('a task accepted under partner settles at partner', async () => {
    const { accountId, apiKey } = await t.account(10_000);
    await book(accountId, 'partner');
    const atBook = await quote(apiKey);
    expect(atBook).toBeLessThan(PRICE_D);
    const created = await createTask(t, apiKey, bodyD());
    expect(created.status).toBe(202);
    const done = await waitForTerminal(t, apiKey, created.body.data.taskId, 20_000);
    expect([done.state, done.credits]).toEqual(['succeeded', atBook]);
    expect(await t.wallet(accountId)).toMatchObject({ spent: atBook, held: 0, available: 10_000 - atBook });
    await t.checkLedger(accountId);
  });

  it('an account moved to the published prices while its task runs settles at the book it was accepted under', async () => {
    const { accountId, apiKey } = await t.account(10_000);
    await book(accountId, 'partner');
    const atBook = await quote(apiKey);
    const created = await createTask(t, apiKey, bodyD());
    const taskId = created.body.data.taskId as string;
    // Moved once the worker holds the task (running): the book it was accepted under is on the task row.
    for (let i = 0; i < 400 && (await stateOf(apiKey, taskId)) !== 'running'; i++)
      await new Promise((resolve) => setTimeout(resolve, 25));
    expect(await stateOf(apiKey, taskId)).toBe('running');
    await book(accountId, null);
    expect(await quote(apiKey)).toBe(PRICE_D);
    const done = await waitForTerminal(t, apiKey, taskId, 20_000);
    expect([done.state, done.credits]).toEqual(['succeeded', atBook]);
    const row = await t.service.ctx.db.kysely
      .selectFrom('tasks')
      .select(['price_book', 'charged_credits'])
      .where('id', '=', taskId)
      .executeTakeFirstOrThrow();
    expect([row.price_book, Number(row.charged_credits)]).toEqual(['partner', atBook]);
    expect(await t.wallet(accountId)).toMatchObject({ spent: atBook, held: 0 });
    await t.checkLedger(accountId);
  });
});
