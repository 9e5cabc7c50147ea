import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaforgeJsonInProcess } from '../support/cli-process.js';
import { ManualClock } from '../../runtime/clock.js';
import type { Trx } from '../../runtime/storage/executor.js';
import { failTask, succeedTask } from '../../runtime/tasks/resolve-task.js';
import { startTestService, type TestService } from '../support/service.js';
import { bodyD, createTask, expectError, bodyMini } from './helpers.js';

/**
 * Statements (issue 39): GET /api/v1/statements/{YYYY-MM} over random ledger histories (a seeded
 * PRNG; the seed is printed, MEDIAFORGE_STATEMENT_SEED replays one): for every account and month,
 * opening + purchases - refunds - charges = closing, months chain, the last closing is the wallet's
 * available + held, and the CSV says what the JSON says. Then the key scope and bad months.
 */

/** Runs the CLI in this process with --json and answers what it printed. */
const cli = (t: TestService, argv: string[]) => mediaforgeJsonInProcess(t.config.dbUrl, argv);

/** An account with no credits and a key whose account-reports scope is on (or not). */
async function reportingAccount(t: TestService, scope = true): Promise<{ accountId: string; apiKey: string }> {
  const { accountId } = await t.account(0);
  const { apiKey, keyId } = await cli(t, ['keys', 'create', '--account', accountId]);
  if (scope) await cli(t, ['keys', 'scope', '--key', keyId, '--account-reports', 'on']);
  return { accountId, apiKey };
}

/** mulberry32: a small seeded PRNG, so a failing history can be replayed from its printed seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** Parses the statement CSV back into the JSON's shape. */
function statementFromCsv(csv: string, month: string) {
  const lines = csv.trimEnd().split('\r\n');
  expect(lines[0]).toBe('section,item,credits');
  const s: any = { month, purchases: {}, refunds: {}, charges: { byModel: [] } };
  for (const line of lines.slice(1)) {
    const [section, item, value] = line.split(',') as [string, string, string];
    const n = Number(value);
    if (section === 'openingBalance' || section === 'closingBalance') s[section] = n;
    else if (section === 'charges' && item !== 'total') s.charges.byModel.push({ model: item, credits: n });
    else s[section][item] = n;
  }
  return s;
}

const MINI_BODY = bodyMini(-1);

const DAY = 24 * 3600 * 1000;
const START = Date.UTC(2026, 0, 1);

describe('statements', () => {
  let t: TestService;
  const clock = new ManualClock(START);
  beforeAll(async () => {
    t = await startTestService({}, { clock, startWorker: false });
  });
  afterAll(async () => {
    await t?.close();
  });

  const inTrx = <T>(fn: (trx: Trx) => Promise<T>) => t.service.ctx.db.kysely.transaction().execute(fn);

  it('the identity holds for every account and month of random histories, and the CSV equals the JSON', async () => {
    const seed = Number(process.env.MEDIAFORGE_STATEMENT_SEED ?? Date.now() % 2 ** 31);
    console.info(`statement histories: seed ${seed}`);
    const random = prng(seed);
    const pick = (n: number) => Math.floor(random() * n);
    clock.set(START);
    const accounts = [];
    for (let i = 0; i < 3; i++) accounts.push(await reportingAccount(t));
    const added = new Map<string, number>(); // `${account}|${month}` -> purchases + grants
    const disputes = new Map<string, string[]>();
    const open: { accountId: string; taskId: string; seconds: number }[] = [];
    let seq = 0;
    // What the history has done: it runs on past 120 steps (at most 1,000) until it has reached every
    // way a balance moves, which a short random history can miss (accounts in debt take no tasks,
    // so a seed could end with no settlement at all).
    const reached = new Set<string>();
    const EVERY_WAY = ['purchase', 'grant', 'refund', 'dispute', 'settle'];
    for (let step = 0; step < 1000 && (step < 120 || EVERY_WAY.some((way) => !reached.has(way))); step++) {
      clock.set(clock.now() + pick(4 * DAY));
      const now = clock.now();
      const { accountId, apiKey } = accounts[pick(accounts.length)]!;
      const credits = 1 + pick(200);
      const ref = `${++seq}`;
      const month = new Date(now).toISOString().slice(0, 7);
      switch (pick(8)) {
        case 0:
        case 1: {
          const paid = pick(2) === 0;
          reached.add(paid ? 'purchase' : 'grant');
          await inTrx((trx) =>
            (paid ? t.service.ctx.ledger.purchase : t.service.ctx.ledger.grant)(trx, accountId, credits, now, {
              note: null,
              byUserId: null,
              reference: paid ? `stripe:cs_${ref}` : `grant:${ref}`,
            }),
          );
          const key = `${accountId}|${month}`;
          added.set(key, (added.get(key) ?? 0) + credits);
          break;
        }
        case 2:
          reached.add('refund');
          await inTrx((trx) =>
            t.service.ctx.ledger.reverse(trx, 'refund', accountId, credits, now, `stripe:re_${ref}`),
          );
          break;
        case 3: {
          reached.add('dispute');
          await inTrx((trx) =>
            t.service.ctx.ledger.reverse(trx, 'dispute', accountId, credits, now, `stripe:dp_${ref}`),
          );
          disputes.set(accountId, [...(disputes.get(accountId) ?? []), `stripe:dp_${ref}`]);
          break;
        }
        case 4: {
          const mine = disputes.get(accountId) ?? [];
          if (mine.length > 0)
            await inTrx((trx) => t.service.ctx.ledger.restoreDispute(trx, accountId, now, mine[pick(mine.length)]!));
          else
            await inTrx((trx) =>
              t.service.ctx.ledger.forgiveDebt(trx, accountId, now, {
                reference: `forgive:${ref}`,
                byUserId: null,
                note: null,
              }),
            );
          break;
        }
        case 5:
        case 6: {
          // A task: held now, settled or released now or at a later step (perhaps in a later month).
          const mini = pick(2) === 0;
          const r = await createTask(t, apiKey, mini ? MINI_BODY : bodyD());
          if (r.status === 202) open.push({ accountId, taskId: r.body.data.taskId, seconds: mini ? 1 + pick(15) : 5 });
          break;
        }
        default: {
          const task = open.splice(pick(open.length + 1) - 1, 1)[0];
          if (!task) break;
          if (pick(3) === 0) await failTask(t.service.ctx, task.taskId, 'generation_failed', 'a random failure');
          else {
            await succeedTask(t.service.ctx, task.taskId, { outputs: [], outputSeconds: task.seconds });
            reached.add('settle');
          }
        }
      }
    }
    const kinds = await t.service.ctx.db.kysely
      .selectFrom('ledger_entries')
      .select(['kind', (eb) => eb.fn.countAll<number>().as('n')])
      .where(
        'account_id',
        'in',
        accounts.map((a) => a.accountId),
      )
      .groupBy('kind')
      .execute();
    console.info(`ledger rows by kind: ${kinds.map((k) => `${k.kind} ${k.n}`).join(', ')}`);
    // The history reached every way a balance moves (else the identity was checked on too little).
    expect(kinds.map((k) => k.kind)).toEqual(expect.arrayContaining(EVERY_WAY));
    const lastMonth = new Date(clock.now()).getUTCMonth();
    // The month after the last step is read too (nothing in it: its opening is the last closing), so
    // the clock moves into it: a month not begun yet is refused (the test below).
    clock.set(Date.UTC(2026, lastMonth + 1, 1));
    for (const { accountId, apiKey } of accounts) {
      await t.checkLedger(accountId);
      let previousClosing = 0;
      let charges = 0;
      for (let m = 0; m <= lastMonth + 1; m++) {
        const month = `2026-${String(m + 1).padStart(2, '0')}`;
        const r = await t.call('GET', `/api/v1/statements/${month}`, { key: apiKey });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        const s = r.body.data;
        const context = `seed ${seed}, ${accountId}, ${month}: ${JSON.stringify(s)}`;
        expect(s.openingBalance + s.purchases.total - s.refunds.total - s.charges.total, context).toBe(
          s.closingBalance,
        );
        expect(s.openingBalance, context).toBe(previousClosing);
        expect(s.purchases.total, context).toBe(added.get(`${accountId}|${month}`) ?? 0);
        expect(
          s.charges.byModel.reduce((sum: number, x: { credits: number }) => sum + x.credits, 0),
          context,
        ).toBe(s.charges.total);
        previousClosing = s.closingBalance;
        charges += s.charges.total;
        const csv = await t.call('GET', `/api/v1/statements/${month}?format=csv`, { key: apiKey });
        expect(csv.status).toBe(200);
        expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
        const { byModel, ...charged } = s.charges;
        expect(statementFromCsv(csv.body, month), context).toEqual({
          ...s,
          charges: {
            ...charged,
            byModel: byModel.map((x: { model: string; credits: number }) => ({ model: x.model, credits: x.credits })),
          },
        });
      }
      const wallet = await t.wallet(accountId);
      expect(previousClosing, `seed ${seed}, ${accountId}`).toBe(Number(wallet.available) + Number(wallet.held));
      expect(charges, `seed ${seed}, ${accountId}`).toBe(Number(wallet.spent));
    }
  });

  it('needs the key scope, off by default: 403 40301', async () => {
    const { apiKey } = await reportingAccount(t, false);
    expectError(await t.call('GET', '/api/v1/statements/2026-01', { key: apiKey }), 403, 40301);
    expectError(await t.call('GET', '/api/v1/statements/2026-01?format=csv', { key: apiKey }), 403, 40301);
  });

  it.each([
    ['month 13', '2026-13'],
    ['month 00', '2026-00'],
    ['one digit', '2026-1'],
    ['a day', '2026-01-05'],
    ['not a date', 'last-month'],
  ])('a bad month (%s) answers 400 naming the month', async (_name, month) => {
    const { apiKey } = await reportingAccount(t);
    const r = await t.call('GET', `/api/v1/statements/${month}`, { key: apiKey });
    expectError(r, 400, 40008);
    expect(r.body.data).toEqual({ param: 'month' });
  });

  it('a month after the current UTC month of the service clock answers 400 40044 naming the month, in the caller language; the current month and one before the account answer', async () => {
    // The service's clock, not the machine's: mid-March 2026 makes April a month not begun yet.
    clock.set(Date.UTC(2026, 2, 15, 12));
    const { apiKey } = await reportingAccount(t);
    for (const path of ['/api/v1/statements/2026-04', '/api/v1/statements/2027-01?format=csv']) {
      const r = await t.call('GET', path, { key: apiKey, headers: { 'accept-language': 'de' } });
      expectError(r, 400, 40044);
      expect(r.body.data).toEqual({ param: 'month' });
      expect(r.body.msg).toMatch(/^Der Monat 20\d\d-\d\d hat noch nicht begonnen/);
      expect(r.body.msg).toContain('(2026-03, UTC)');
    }
    const english = await t.call('GET', '/api/v1/statements/2026-04', { key: apiKey });
    expect(english.body.msg).toBe(
      'The month 2026-04 has not begun yet: a statement covers at most the current month (2026-03, UTC).',
    );
    // Refused before the key's scope is read: the month is the request's fault (docs/contracts.md's order).
    const { apiKey: unscoped } = await reportingAccount(t, false);
    expectError(await t.call('GET', '/api/v1/statements/2026-04', { key: unscoped }), 400, 40044);
    expectError(await t.call('GET', '/api/v1/statements/2026-03', { key: unscoped }), 403, 40301);
    const current = await t.call('GET', '/api/v1/statements/2026-03', { key: apiKey });
    expect(current.status).toBe(200);
    // Years before the account existed: zeros.
    const before = await t.call('GET', '/api/v1/statements/2019-06', { key: apiKey });
    expect(before.status).toBe(200);
    expect(before.body.data).toMatchObject({
      openingBalance: 0,
      purchases: { total: 0 },
      refunds: { total: 0 },
      charges: { total: 0, byModel: [] },
      closingBalance: 0,
    });
  });

  it('a bad format answers 400', async () => {
    const { apiKey } = await reportingAccount(t);
    const r = await t.call('GET', '/api/v1/statements/2026-01?format=xml', { key: apiKey });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toContain('format');
  });
});
