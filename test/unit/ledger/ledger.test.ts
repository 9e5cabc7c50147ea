import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerFor } from '../../../runtime/ledger/ledger-for.js';
import type { Balance, Ledger } from '../../../runtime/ledger/ledger.js';
import { openDb, type Db } from '../../../runtime/storage/dialect.js';
import type { Trx } from '../../../runtime/storage/executor.js';
import { migrateToLatest } from '../../../runtime/storage/migrate.js';
import { dropTestSchema, TEST_DB, testDbUrl } from '../../support/service.js';
import { SETTLED_CHARGE_CASES } from './settled-charge-cases.js';

/**
 * runtime/ledger/ledger.ts: the Ledger's cases, one table run on the engine of the project (the
 * sqlite project on a SQLite file, the postgres project on a PostgreSQL schema: this suite reaches
 * test/support/service.ts, so it is a database suite run on both), each against a real, migrated
 * database and a fresh account that starts with `given.credits` granted. A case is a list of steps;
 * it wants each step's answer, the wallet after them and the ledger rows' kinds and amounts in order.
 */

type Step =
  | { hold: string; amount: number; budget?: number }
  | { settle: string; charge: number }
  | { release: string }
  | { purchase: number; reference?: string }
  | { grant: number; reference?: string }
  | { refund: number; reference: string }
  | { dispute: number; reference: string }
  | { disputeWon: string }
  | { forgive: string };

interface Case {
  given: { credits: number; steps: Step[] };
  want: { answers: unknown[]; wallet: Partial<Balance>; rows: string[]; keySpend?: number };
}

const KEY = 'key_budgeted';
const PERIOD = 0;

const CASES: [string, Case][] = [
  [
    'a hold within the funds moves available to held',
    {
      given: { credits: 100, steps: [{ hold: 't1', amount: 60 }] },
      want: { answers: ['held'], wallet: { available: 40, held: 60 }, rows: ['grant 100', 'hold 60'] },
    },
  ],
  [
    'a hold of exactly what is available is taken',
    {
      given: { credits: 100, steps: [{ hold: 't1', amount: 100 }] },
      want: { answers: ['held'], wallet: { available: 0, held: 100 }, rows: ['grant 100', 'hold 100'] },
    },
  ],
  [
    'a hold short of funds changes nothing',
    {
      given: { credits: 50, steps: [{ hold: 't1', amount: 60 }] },
      want: { answers: ['funds'], wallet: { available: 50, held: 0 }, rows: ['grant 50'] },
    },
  ],
  [
    "a hold within the key's budget counts against it",
    {
      given: { credits: 100, steps: [{ hold: 't1', amount: 30, budget: 50 }] },
      want: { answers: ['held'], wallet: { available: 70, held: 30 }, rows: ['grant 100', 'hold 30'], keySpend: 30 },
    },
  ],
  [
    "a hold over the key's budget is refused before the funds, and counts nothing",
    {
      given: {
        credits: 100,
        steps: [
          { hold: 't1', amount: 30, budget: 50 },
          { hold: 't2', amount: 30, budget: 50 },
        ],
      },
      want: {
        answers: ['held', 'budget'],
        wallet: { available: 70, held: 30 },
        rows: ['grant 100', 'hold 30'],
        keySpend: 30,
      },
    },
  ],
  [
    "a hold within the budget but short of funds leaves the key's budget as it was",
    {
      given: { credits: 20, steps: [{ hold: 't1', amount: 30, budget: 50 }] },
      want: { answers: ['funds'], wallet: { available: 20, held: 0 }, rows: ['grant 20'], keySpend: 0 },
    },
  ],
  [
    'a settlement below the hold spends the charge and returns the rest',
    {
      given: {
        credits: 100,
        steps: [
          { hold: 't1', amount: 60 },
          { settle: 't1', charge: 25 },
        ],
      },
      want: {
        answers: ['held', 25],
        wallet: { available: 75, held: 0, spent: 25 },
        rows: ['grant 100', 'hold 60', 'settle 25'],
      },
    },
  ],
  [
    "a settlement moves the key's budget from held to spent",
    {
      given: {
        credits: 100,
        steps: [
          { hold: 't1', amount: 40, budget: 50 },
          { settle: 't1', charge: 10 },
          { hold: 't2', amount: 40, budget: 50 },
        ],
      },
      want: {
        answers: ['held', 10, 'held'],
        wallet: { available: 50, held: 40, spent: 10 },
        rows: ['grant 100', 'hold 40', 'settle 10', 'hold 40'],
        keySpend: 50,
      },
    },
  ],
  [
    'a hold settled twice is settled once',
    {
      given: {
        credits: 100,
        steps: [
          { hold: 't1', amount: 60 },
          { settle: 't1', charge: 25 },
          { settle: 't1', charge: 60 },
        ],
      },
      want: {
        answers: ['held', 25, undefined],
        wallet: { available: 75, held: 0, spent: 25 },
        rows: ['grant 100', 'hold 60', 'settle 25'],
      },
    },
  ],
  [
    'a release returns the whole hold',
    {
      given: { credits: 100, steps: [{ hold: 't1', amount: 60 }, { release: 't1' }] },
      want: {
        answers: ['held', true],
        wallet: { available: 100, held: 0, spent: 0 },
        rows: ['grant 100', 'hold 60', 'release 60'],
      },
    },
  ],
  [
    "a release gives the key's budget back",
    {
      given: {
        credits: 100,
        steps: [{ hold: 't1', amount: 40, budget: 50 }, { release: 't1' }, { hold: 't2', amount: 50, budget: 50 }],
      },
      want: {
        answers: ['held', true, 'held'],
        wallet: { available: 50, held: 50 },
        rows: ['grant 100', 'hold 40', 'release 40', 'hold 50'],
        keySpend: 50,
      },
    },
  ],
  [
    'a release after the settlement changes nothing',
    {
      given: {
        credits: 100,
        steps: [{ hold: 't1', amount: 60 }, { settle: 't1', charge: 60 }, { release: 't1' }],
      },
      want: {
        answers: ['held', 60, false],
        wallet: { available: 40, held: 0, spent: 60 },
        rows: ['grant 100', 'hold 60', 'settle 60'],
      },
    },
  ],
  [
    'a settlement after the release changes nothing',
    {
      given: { credits: 100, steps: [{ hold: 't1', amount: 60 }, { release: 't1' }, { settle: 't1', charge: 60 }] },
      want: {
        answers: ['held', true, undefined],
        wallet: { available: 100, held: 0, spent: 0 },
        rows: ['grant 100', 'hold 60', 'release 60'],
      },
    },
  ],
  [
    'a settlement or release of a task without a hold changes nothing',
    {
      given: { credits: 100, steps: [{ settle: 'none', charge: 5 }, { release: 'none' }] },
      want: { answers: [undefined, false], wallet: { available: 100 }, rows: ['grant 100'] },
    },
  ],
  [
    'a purchase with a reference applied twice is one purchase',
    {
      given: {
        credits: 0,
        steps: [
          { purchase: 300, reference: 'stripe:cs_1' },
          { purchase: 300, reference: 'stripe:cs_1' },
        ],
      },
      want: {
        answers: [
          { added: 300, replayed: false, debtPaid: 0 },
          { added: 300, replayed: true, debtPaid: 0 },
        ],
        wallet: { available: 300, purchased: 300 },
        rows: ['purchase 300'],
      },
    },
  ],
  [
    'a grant is kept apart from purchases, once per reference',
    {
      given: {
        credits: 0,
        steps: [{ grant: 40, reference: 'grant:k1' }, { grant: 40, reference: 'grant:k1' }, { grant: 5 }],
      },
      want: {
        answers: [
          { added: 40, replayed: false, debtPaid: 0 },
          { added: 40, replayed: true, debtPaid: 0 },
          { added: 5, replayed: false, debtPaid: 0 },
        ],
        wallet: { available: 45, purchased: 45 },
        rows: ['grant 40', 'grant 5'],
      },
    },
  ],
  [
    'a refund within the balance takes it back',
    {
      given: {
        credits: 0,
        steps: [
          { purchase: 300, reference: 'stripe:cs_1' },
          { refund: 100, reference: 'stripe:re_1' },
        ],
      },
      want: {
        answers: [
          { added: 300, replayed: false, debtPaid: 0 },
          { taken: 100, owed: 0, replayed: false },
        ],
        wallet: { available: 200, purchased: 300, reversed: 100, owed: 0 },
        rows: ['purchase 300', 'refund 100'],
      },
    },
  ],
  [
    'a refund past the balance takes what is available and the rest becomes a debt',
    {
      given: {
        credits: 0,
        steps: [
          { purchase: 300, reference: 'stripe:cs_1' },
          { hold: 't1', amount: 250 },
          { refund: 300, reference: 'stripe:re_1' },
        ],
      },
      want: {
        answers: [{ added: 300, replayed: false, debtPaid: 0 }, 'held', { taken: 50, owed: 250, replayed: false }],
        wallet: { available: 0, held: 250, reversed: 50, owed: 250 },
        rows: ['purchase 300', 'hold 250', 'refund 50', 'debt 250'],
      },
    },
  ],
  [
    'a refund applied twice takes back once',
    {
      given: {
        credits: 0,
        steps: [
          { purchase: 300, reference: 'stripe:cs_1' },
          { refund: 100, reference: 'stripe:re_1' },
          { refund: 100, reference: 'stripe:re_1' },
        ],
      },
      want: {
        answers: [
          { added: 300, replayed: false, debtPaid: 0 },
          { taken: 100, owed: 0, replayed: false },
          { taken: 0, owed: 0, replayed: true },
        ],
        wallet: { available: 200, reversed: 100 },
        rows: ['purchase 300', 'refund 100'],
      },
    },
  ],
  [
    'a purchase while something is owed pays the debt first',
    {
      given: {
        credits: 0,
        steps: [
          { refund: 80, reference: 'stripe:re_1' },
          { purchase: 300, reference: 'stripe:cs_2' },
        ],
      },
      want: {
        answers: [
          { taken: 0, owed: 80, replayed: false },
          { added: 300, replayed: false, debtPaid: 80 },
        ],
        wallet: { available: 220, purchased: 300, reversed: 80, owed: 0 },
        rows: ['refund 0', 'debt 80', 'purchase 300', 'debt_paid 80'],
      },
    },
  ],
  [
    'a hold while something is owed still needs the funds (the debt refusal is the edge’s)',
    {
      given: {
        credits: 0,
        steps: [{ refund: 80, reference: 'stripe:re_1' }, { grant: 50 }, { hold: 't1', amount: 10 }],
      },
      want: {
        answers: [{ taken: 0, owed: 80, replayed: false }, { added: 50, replayed: false, debtPaid: 50 }, 'funds'],
        wallet: { available: 0, owed: 30, reversed: 50 },
        rows: ['refund 0', 'debt 80', 'grant 50', 'debt_paid 50'],
      },
    },
  ],
  [
    'a dispute won gives back what it took and cancels the debt still owed',
    {
      given: {
        credits: 0,
        steps: [
          { purchase: 100, reference: 'stripe:cs_1' },
          { dispute: 150, reference: 'stripe:dp_1' },
          { disputeWon: 'stripe:dp_1' },
          { disputeWon: 'stripe:dp_1' },
        ],
      },
      want: {
        answers: [
          { added: 100, replayed: false, debtPaid: 0 },
          { taken: 100, owed: 50, replayed: false },
          { returned: 100, cancelled: 50, replayed: false },
          { returned: 0, cancelled: 0, replayed: true },
        ],
        wallet: { available: 100, owed: 0, reversed: 0 },
        rows: ['purchase 100', 'dispute 100', 'debt 50', 'dispute_won 100', 'debt_forgiven 50'],
      },
    },
  ],
  [
    'a debt forgiven is forgiven once',
    {
      given: {
        credits: 0,
        steps: [{ refund: 70, reference: 'stripe:re_1' }, { forgive: 'forgive:k1' }, { forgive: 'forgive:k1' }],
      },
      want: {
        answers: [
          { taken: 0, owed: 70, replayed: false },
          { forgiven: 70, replayed: false },
          { forgiven: 0, replayed: true },
        ],
        wallet: { available: 0, owed: 0 },
        rows: ['refund 0', 'debt 70', 'debt_forgiven 70'],
      },
    },
  ],
  ...SETTLED_CHARGE_CASES.map(([name, { given, want }]): [string, Case] => [
    `settledCharge's rule in the settlement statement: ${name}`,
    {
      given: {
        credits: given.held,
        steps: [
          { hold: 't1', amount: given.held },
          { settle: 't1', charge: given.charge },
        ],
      },
      want: {
        answers: ['held', want],
        wallet: { available: given.held - want, held: 0, spent: want },
        rows: [`grant ${given.held}`, `hold ${given.held}`, `settle ${want}`].filter((r) => r !== 'grant 0'),
      },
    },
  ]),
];

let dir: string;
let db: Db;
let ledger: Ledger;
let accounts = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mf-ledger-'));
  db = await openDb(await testDbUrl(dir));
  await migrateToLatest(db);
  ledger = ledgerFor(db);
});

afterAll(async () => {
  await db?.close();
  await dropTestSchema(dir);
  rmSync(dir, { recursive: true, force: true });
});

const NOW = 1_790_000_000_000;
const inTrx = <T>(work: (trx: Trx) => Promise<T>) => db.kysely.transaction().execute(work);

async function run(accountId: string, step: Step): Promise<unknown> {
  const task = (name: string) => `${accountId}_${name}`;
  if ('hold' in step)
    return ledger.hold(db, {
      accountId,
      taskId: task(step.hold),
      amount: step.amount,
      now: NOW,
      spend:
        step.budget === undefined ? null : { keyId: `${accountId}_${KEY}`, periodStart: PERIOD, budget: step.budget },
    });
  if ('settle' in step) return inTrx((trx) => ledger.settle(trx, task(step.settle), step.charge, NOW));
  if ('release' in step) return inTrx((trx) => ledger.release(trx, task(step.release), NOW));
  const origin = (reference?: string) => ({ note: null, byUserId: null, reference: reference ?? null });
  if ('purchase' in step)
    return inTrx((trx) => ledger.purchase(trx, accountId, step.purchase, NOW, origin(step.reference)));
  if ('grant' in step) return inTrx((trx) => ledger.grant(trx, accountId, step.grant, NOW, origin(step.reference)));
  if ('refund' in step)
    return inTrx((trx) => ledger.reverse(trx, 'refund', accountId, step.refund, NOW, step.reference));
  if ('dispute' in step)
    return inTrx((trx) => ledger.reverse(trx, 'dispute', accountId, step.dispute, NOW, step.reference));
  if ('disputeWon' in step) return inTrx((trx) => ledger.restoreDispute(trx, accountId, NOW, step.disputeWon));
  return inTrx((trx) =>
    ledger.forgiveDebt(trx, accountId, NOW, { reference: step.forgive, byUserId: null, note: null }),
  );
}

describe(`the Ledger on ${TEST_DB}`, () => {
  it(`is the ${TEST_DB} implementation`, () => {
    expect(ledger.engine).toBe(TEST_DB);
  });

  it.each(CASES)('%s', async (_name, { given, want }) => {
    const accountId = `acct_ledger_${++accounts}`;
    await db.kysely
      .insertInto('accounts')
      .values({ id: accountId, created_at: NOW, webhook_secret: 'whsec', payload_version: 2 })
      .execute();
    await inTrx((trx) => ledger.openWallet(trx, accountId));
    if (given.credits > 0) await inTrx((trx) => ledger.grant(trx, accountId, given.credits, NOW));
    const answers = [];
    for (const step of given.steps) answers.push(await run(accountId, step));
    expect(answers).toEqual(want.answers);
    expect(await ledger.balance(db, accountId)).toMatchObject(want.wallet);
    const rows = await db.kysely
      .selectFrom('ledger_entries')
      .select(['kind', 'amount'])
      .where('account_id', '=', accountId)
      .orderBy('id')
      .execute();
    expect(rows.map((r) => `${r.kind} ${r.amount}`)).toEqual(want.rows);
    if (want.keySpend !== undefined)
      expect(await ledger.keySpendUsed(db.kysely, `${accountId}_${KEY}`, PERIOD)).toBe(want.keySpend);
  });
});
