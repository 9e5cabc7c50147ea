/**
 * The monthly statement in the console, in Chromium (issue 39 point 7: "the console shows it as a
 * printable page"): a customer who bought a pack through the (loopback) Stripe, had part of it
 * refunded and ran a task opens /console; the statement section shows the current UTC month by
 * default (and no later one in the picker), another month picked shows its own figures, the table
 * says what consoleStatement says, the CSV link answers the same figures as CSV, a month typed past
 * the picker shows the service's refusal, the print button calls window.print(), and in print media
 * the statement is all that shows: no header, navigation, button, picker or other section.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyD } from '../http/helpers.js';
import {
  buy,
  customer,
  deliver,
  event,
  PACK,
  PACK_CREDITS,
  startPaymentsWorld,
  type PaymentsWorld,
} from '../payments/support.js';
import { type ConfinedBrowser, openConfined } from '../support/browser.js';
import { ROOT } from '../support/root.js';
import { waitForTerminal } from '../support/service.js';
import type { ConsoleUser } from './support.js';

const SHOTS = join(ROOT, 'test-artifacts');

let world: PaymentsWorld;
let confined: ConfinedBrowser;
let page: Page;
let user: ConsoleUser;

/** `YYYY-MM` of the UTC month `offset` months from now. */
function monthFromNow(offset: number): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + offset, 1)).toISOString().slice(0, 7);
}

/** The table's figures by `data-item` (the CSV's `section.item`): [tasks, credits]. */
async function tableFigures(): Promise<Record<string, { tasks: string; credits: number }>> {
  return page.locator('#statement-table tbody tr').evaluateAll((rows) =>
    Object.fromEntries(
      rows.map((row) => {
        const cells = Array.from(row.querySelectorAll('td'), (cell) => cell.textContent ?? '');
        return [row.getAttribute('data-item') ?? '', { tasks: cells[1] ?? '', credits: Number(cells[2]) }];
      }),
    ),
  );
}

/** Picks a month in the section's picker and waits for its figures (or its refusal). */
async function pick(month: string): Promise<void> {
  await page.locator('#statement-month').fill(month);
  await page.locator(`#statement-figures[data-month="${month}"]`).waitFor();
}

beforeAll(async () => {
  world = await startPaymentsWorld();
  // A customer with a purchase (the webhook credits it), a partial refund of it, and a charge.
  const signedUp = await customer(world.t);
  user = signedUp.user;
  const session = await buy(world, user, { pack: PACK.name });
  expect((await deliver(world.t, event('checkout.session.completed', session))).body.outcome).toBe('credited');
  await deliver(world.t, event('charge.refunded', world.stripe.refund(session.id, 300)));
  const key = (await user.call('POST', '/console/api/keys', {})).body.data.apiKey as string;
  const created = await world.t.call('POST', '/api/v1/jobs/createTask', { key, body: bodyD() });
  expect(created.status).toBe(202);
  expect((await waitForTerminal(world.t, key, created.body.data.taskId)).state).toBe('succeeded');

  confined = await openConfined(new URL(world.t.url).origin);
  // The customer's session, as the console's sign-in would have set it.
  const [name, value] = user.cookie.split(/=(.*)/s) as [string, string];
  await confined.context.addCookies([{ name, value, url: world.t.url }]);
  page = await confined.newPage();
  mkdirSync(SHOTS, { recursive: true });
}, 120_000);

afterAll(async () => {
  await confined?.close();
  await world?.close();
});

describe('the statement section of the console', () => {
  it('shows the current month by default, another month when picked, and the figures consoleStatement answers', async () => {
    await page.goto(`${world.t.url}/console`);
    await page.locator('body[data-ready="true"]').waitFor();
    const current = monthFromNow(0);
    const picker = page.locator('#statement-month');
    expect(await picker.inputValue()).toBe(current);
    expect(await picker.getAttribute('max')).toBe(current);
    await page.locator(`#statement-figures[data-month="${current}"]`).waitFor();

    // The month before: the account did not exist, so every figure is 0.
    const previous = monthFromNow(-1);
    await pick(previous);
    expect(await page.locator('#statement-period').innerText()).toContain(previous);
    const before = await tableFigures();
    expect(Object.values(before).map((x) => x.credits)).toEqual(Object.values(before).map(() => 0));

    // Back to this month: the purchase, the refund and the charge, as the service answers them.
    await pick(current);
    const expected = (await user.call('GET', `/console/api/statements/${current}`)).body.data;
    expect(expected.purchases.paid).toBe(PACK_CREDITS);
    expect(expected.refunds.refunded).toBeGreaterThan(0);
    expect(expected.charges.total).toBeGreaterThan(0);
    const shown = await tableFigures();
    expect(shown).toMatchObject({
      openingBalance: { credits: 0 },
      'purchases.paid': { credits: expected.purchases.paid },
      'purchases.granted': { credits: expected.purchases.granted },
      'purchases.total': { credits: expected.purchases.total },
      'refunds.refunded': { credits: expected.refunds.refunded },
      'refunds.disputed': { credits: 0 },
      'refunds.total': { credits: expected.refunds.total },
      'charges.total': { credits: expected.charges.total, tasks: '1' },
      closingBalance: { credits: expected.closingBalance },
    });
    const [model] = expected.charges.byModel;
    expect(shown[`charges.${model.model}`]).toEqual({ tasks: '1', credits: model.credits });
    expect(await page.locator(`#statement-table tr[data-item="charges.${model.model}"] td`).first().innerText()).toBe(
      `Charges: ${model.model}`,
    );
    expect(expected.openingBalance + expected.purchases.total - expected.refunds.total - expected.charges.total).toBe(
      expected.closingBalance,
    );
    expect(confined.problems).toEqual([]);
    expect(confined.foreign).toEqual([]);
  }, 60_000);

  it('the CSV link answers the same figures as CSV', async () => {
    const month = monthFromNow(0);
    const href = await page.locator('#statement-csv').getAttribute('href');
    expect(href).toBe(`/console/api/statements/${month}?format=csv`);
    // Fetched from the page, as the link is followed: the session cookie, no other header.
    const answer = await page.evaluate(async () => {
      const link = document.querySelector<HTMLAnchorElement>('#statement-csv')!;
      const r = await fetch(link.href, { credentials: 'same-origin' });
      return {
        status: r.status,
        type: r.headers.get('content-type'),
        disposition: r.headers.get('content-disposition'),
        text: await r.text(),
      };
    });
    expect(answer).toMatchObject({
      status: 200,
      type: 'text/csv; charset=utf-8',
      disposition: `attachment; filename="statement-${month}.csv"`,
    });
    const lines = answer.text.trimEnd().split('\r\n');
    expect(lines[0]).toBe('section,item,credits');
    const fromCsv = Object.fromEntries(
      lines.slice(1).map((line) => {
        const [section, item, credits] = line.split(',') as [string, string, string];
        return [item ? `${section}.${item}` : section, Number(credits)];
      }),
    );
    const shown = Object.fromEntries(Object.entries(await tableFigures()).map(([item, x]) => [item, x.credits]));
    expect(fromCsv).toEqual(shown);
  }, 30_000);

  it('a month typed past the picker shows the service refusal', async () => {
    const next = monthFromNow(1);
    await pick(next);
    expect(await page.locator('#statement-error').innerText()).toBe(
      `The month ${next} has not begun yet: a statement covers at most the current month (${monthFromNow(0)}, UTC).`,
    );
    await pick(monthFromNow(0));
    await page.locator('#statement-table').waitFor();
  }, 30_000);

  it('print calls window.print(); printed, the statement is all that shows', async () => {
    await page.evaluate(() => {
      const w = window as unknown as { printed: number };
      w.printed = 0;
      window.print = () => {
        w.printed++;
      };
    });
    await page.locator('#statement-print').click();
    expect(await page.evaluate(() => (window as unknown as { printed: number }).printed)).toBe(1);

    const visible = (selector: string) => page.locator(selector).isVisible();
    expect(await visible('header')).toBe(true);
    expect(await visible('#balance')).toBe(true);
    await page.emulateMedia({ media: 'print' });
    expect(await visible('#statement-table')).toBe(true);
    expect(await visible('#statement-period')).toBe(true);
    for (const hidden of [
      'header',
      'nav',
      '#statement-controls, .statement-controls',
      '#statement-month',
      '#statement-csv',
    ])
      expect(await visible(hidden), hidden).toBe(false);
    // Every other section of the page, and every button anywhere.
    const sections = await page.locator('main > section').evaluateAll((all) => all.map((s) => s.id));
    expect(sections.length).toBeGreaterThan(5);
    for (const id of sections.filter((id) => id !== 'statement')) expect(await visible(`[id="${id}"]`), id).toBe(false);
    expect(await page.locator('button:visible').count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, 'console-statement-print.png'), fullPage: true });
    await page.emulateMedia({ media: 'screen' });
    expect(await visible('#balance')).toBe(true);
    expect(confined.problems).toEqual([]);
    expect(confined.foreign).toEqual([]);
  }, 30_000);
});
