/**
 * The playground's model picker prices at the playground account's book (issue 40, point 4): its
 * "from" and defaults prices for an account on spec/price-books/partner.yaml differ from the
 * published ones and equal what the playground's quote answers that account.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setAccountPriceBook } from '../../runtime/accounts/price-book.js';
import { CLI_OPERATOR } from '../../runtime/operator/operator-actions.js';
import { startTestService, type TestService } from '../support/service.js';
import { signUp, type ConsoleUser, userRow } from './support.js';

interface PickerModel {
  id: string;
  minimumFor5sCredits: number;
  defaultsMaxCredits: number | null;
}

describe('the playground picker under a price book', () => {
  let t: TestService;
  let partner: ConsoleUser;
  let published: ConsoleUser;
  let partnerPlayground: string;

  // The first model a prompt alone can run (its defaults are priced on the picker).
  let model: string;
  const picker = async (user: ConsoleUser) =>
    (await user.call('GET', '/playground/api/models')).body.data as PickerModel[];
  const pickerModel = async (user: ConsoleUser) => (await picker(user)).find((m) => m.id === model)!;
  const quote = async (user: ConsoleUser) =>
    (await user.call('POST', '/playground/api/quote', { model, input: { prompt: 'A lighthouse at dusk' } })).body.data;

  beforeAll(async () => {
    t = await startTestService({}, { startWorker: false });
    partner = await signUp(t, 'pat@example.com');
    published = await signUp(t, 'pub@example.com');
    partnerPlayground = (await userRow(t, 'pat@example.com')).playground_account_id;
    await setAccountPriceBook(t.service.ctx.db, CLI_OPERATOR, partnerPlayground, 'partner', Date.now());
    model = (await picker(published)).find((m) => m.defaultsMaxCredits !== null)!.id;
  });
  afterAll(async () => t?.close());

  it('the picker’s prices are the book’s, differ from the published ones, and equal quote’s', async () => {
    const [mine, theirs] = [await pickerModel(partner), await pickerModel(published)];
    expect(mine.defaultsMaxCredits).not.toBeNull();
    expect(mine.defaultsMaxCredits).toBeLessThan(theirs.defaultsMaxCredits!);
    expect(mine.minimumFor5sCredits).toBeLessThan(theirs.minimumFor5sCredits);
    // What the picker says is what quote answers each account for the same defaults.
    expect(mine.defaultsMaxCredits).toBe((await quote(partner)).maxCredits);
    expect(theirs.defaultsMaxCredits).toBe((await quote(published)).maxCredits);
  });

  it('follows the account back to the published prices', async () => {
    await setAccountPriceBook(t.service.ctx.db, CLI_OPERATOR, partnerPlayground, null, Date.now());
    expect(await pickerModel(partner)).toEqual(await pickerModel(published));
  });
});
