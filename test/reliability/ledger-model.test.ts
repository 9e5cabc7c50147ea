import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCredits } from '../../runtime/accounts/accounts.js';
import { ManualClock } from '../../runtime/clock.js';
import { CLI_OPERATOR, setRole } from '../../runtime/operator/operator-actions.js';
import { setAccountReports } from '../../runtime/reports/report-scope.js';
import { IDEMPOTENCY_WINDOW_MS } from '../../runtime/tasks/acceptance.js';
import { signIn, signUp, type ConsoleUser } from '../console/support.js';
import { bodyD, createTask, expectError, recordInfo, bodyMini } from '../http/helpers.js';
import {
  buy,
  deliver,
  event,
  PACK,
  PACK_CREDITS,
  type PaymentsWorld,
  startPaymentsWorld,
} from '../payments/support.js';
import type { TestService } from '../support/service.js';
import { FAIL, GatedDeployment, recordCounts, simulatorAutoSeconds } from './support.js';

/**
 * Model-based test of the ledger: random sequences of commands run against the real service
 * (over HTTP, worker driven by hand, time on a ManualClock) and against a small reference model;
 * after every command the balances (owed and reversed too), every task's state and charge, and the
 * ledger rows agree. The money-back commands go through the public surface as in
 * test/payments/: a pack bought in the console and paid at the loopback Stripe, refunds (partial
 * and full), disputes and disputes won as signed events delivered to the webhook, any of them
 * delivered again, and an operator forgiving the debt in the console. After each run, every month
 * of the account's history has the statement the model says (GET /api/v1/statements), and
 * opening + purchases - refunds - charges = closing, months chaining to the wallet's balance.
 */
type Kind = 'd' | 'mini' | 'fail';
const BODIES: Record<Kind, object> = {
  d: bodyD(),
  mini: bodyMini(-1),
  fail: bodyD(`a storm at sea ${FAIL}, Picture 1 as the ship`),
};
/** What each kind holds: family_d 5 s = 28; mini -1 holds 15 s at 7.94/s = 120. */
const HOLD: Record<Kind, number> = { d: 28, mini: 120, fail: 28 };
const DEADLINE_MS = 30 * 60_000;
const QUOTE_TTL_MS = 5 * 60_000;

function charge(kind: Kind, taskId: string): number {
  if (kind === 'mini') return Math.ceil((794 * simulatorAutoSeconds(taskId)) / 100);
  return HOLD[kind];
}

interface MTask {
  id: string;
  kind: Kind;
  state: 'open' | 'succeeded' | 'failed' | 'expired';
  hold: number;
  charged: number;
  deadline: number;
  purged: boolean;
  idempotencyKey?: string;
  createdAt: number;
}
/** A Checkout Session the account paid: what was refunded of it, and its dispute. */
interface MSession {
  id: string;
  /** Minor units refunded so far (the charge's cumulative refunds). */
  refundedAmount: number;
  /** What the dispute took from available and left owed (reversals.ts), and whether it was won. */
  dispute?: { taken: number; debt: number; won: boolean };
}
/** One month's figures as the statement names them (runtime/reports/statement.ts). */
interface Tally {
  paid: number;
  granted: number;
  refunded: number;
  disputed: number;
  disputesWon: number;
  debtPaid: number;
  debtIncurred: number;
  debtForgiven: number;
  charges: number;
}
interface Model {
  available: number;
  held: number;
  spent: number;
  purchased: number;
  /** Credits a refund or dispute could not take (wallets.owed): new work is refused 402 40202 while > 0. */
  owed: number;
  /** Credits taken back: refunds, disputes and debt paid, less disputes won (wallets.reversed). */
  reversed: number;
  now: number;
  /** When the run began: its days commands stay within the customer's session (7 days). */
  start: number;
  tasks: MTask[];
  sessions: MSession[];
  /** Every signed event delivered, for delivering one again. */
  delivered: { body: string; signature: string }[];
  /** `YYYY-MM` -> that month's figures. */
  months: Map<string, Tally>;
}
interface Real {
  t: TestService;
  accountId: string;
  apiKey: string;
  user: ConsoleUser;
}

const counts: Record<string, number> = { runs: 0, commands: 0, checks: 0, violations: 0, statements: 0 };
let keySeq = 0;
let world: PaymentsWorld;
let t: TestService;
const clock = new ManualClock(Date.UTC(2026, 0, 1));
const gate = new GatedDeployment(() => clock.now());
const HOUR = 3600_000;
const DAY = 24 * HOUR;
const OPERATOR = 'ledger-model-operator@example.test';
/** The operator's console session and the time it was opened (the clock moves about a month a run). */
let operator: { user: ConsoleUser; at: number } | undefined;

/** What a refund of `amount` minor units of the pack gives back (apply-payment.ts creditsFor): in proportion, rounded down. */
const creditsFor = (amount: number) => Math.min(PACK_CREDITS, Math.floor((PACK_CREDITS * amount) / PACK.price));
const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
/**
 * Refunds are multiples of the smallest amount worth whole credits: the service applies a charge's
 * refunds in Stripe's order (created second, then id), which for two in one second is not the
 * order they were made; with whole credits per refund the deltas do not depend on it.
 */
const UNIT = PACK.price / gcd(PACK_CREDITS, PACK.price);

const monthOf = (ms: number) => new Date(ms).toISOString().slice(0, 7);
const ZERO: Tally = {
  paid: 0,
  granted: 0,
  refunded: 0,
  disputed: 0,
  disputesWon: 0,
  debtPaid: 0,
  debtIncurred: 0,
  debtForgiven: 0,
  charges: 0,
};

/** This month's figures (the ledger dates a row by the service's clock, the model's `now`). */
function tally(m: Model): Tally {
  const month = monthOf(m.now);
  if (!m.months.has(month)) m.months.set(month, { ...ZERO });
  return m.months.get(month)!;
}

/** A purchase or a grant: available grows, then pays what is owed first (ledger.ts payDebt). */
function credit(m: Model, kind: 'paid' | 'granted', credits: number) {
  m.available += credits;
  m.purchased += credits;
  tally(m)[kind] += credits;
  const pay = Math.min(credits, m.owed);
  m.available -= pay;
  m.owed -= pay;
  m.reversed += pay;
  tally(m).debtPaid += pay;
}

/** A refund or a dispute: what available holds is taken, the rest owed (reversals.ts reverseCredits). */
function reverse(m: Model, kind: 'refunded' | 'disputed', credits: number): { taken: number; debt: number } {
  const taken = Math.min(credits, m.available);
  const debt = credits - taken;
  m.available -= taken;
  m.reversed += taken;
  m.owed += debt;
  tally(m)[kind] += taken;
  tally(m).debtIncurred += debt;
  return { taken, debt };
}

function advance(m: Model, ms: number) {
  m.now += ms;
  clock.set(m.now);
}

/** Delivers a signed event to the webhook and keeps it for a later delivery again; answers its outcome. */
async function deliverNew(m: Model, type: string, object: unknown): Promise<string> {
  const signed = event(type, object);
  const r = await deliver(t, signed);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  m.delivered.push(signed);
  return r.body.outcome;
}

/** The operator's session, opened again once the clock has moved near its end (7 days). */
async function operatorSession(now: number): Promise<ConsoleUser> {
  if (!operator || now - operator.at > 6 * DAY) operator = { user: await signIn(t, OPERATOR), at: now };
  return operator.user;
}

/** Runs the worker until nothing is due; the model resolves what the real worker must have resolved. */
async function settle(m: Model): Promise<void> {
  for (let pass = 0; pass < 50 && (await t.service.worker!.runOnce()) > 0; pass++);
  for (const task of m.tasks) {
    if (task.state !== 'open') continue;
    if (task.deadline <= m.now) {
      task.state = 'expired';
      counts.expired = (counts.expired ?? 0) + 1;
      m.held -= task.hold;
      m.available += task.hold;
    } else if (gate.released.has(task.id)) {
      m.held -= task.hold;
      if (task.kind === 'fail') {
        task.state = 'failed';
        counts.failed = (counts.failed ?? 0) + 1;
        m.available += task.hold;
      } else {
        task.state = 'succeeded';
        counts.succeeded = (counts.succeeded ?? 0) + 1;
        task.charged = charge(task.kind, task.id);
        m.spent += task.charged;
        m.available += task.hold - task.charged;
        tally(m).charges += task.charged;
      }
    }
  }
}

function accept(m: Model, r: { status: number; body: any }, kind: Kind, idempotencyKey?: string) {
  // Debt before funds (docs/contracts.md's order); the message names what is owed.
  if (m.owed > 0) {
    expectError(r as any, 402, 40202);
    expect(r.body.msg).toContain(String(m.owed));
    return;
  }
  if (m.available < HOLD[kind]) {
    expectError(r as any, 402, 40201);
    return;
  }
  expect(r.status, JSON.stringify(r.body)).toBeOneOf([200, 202]);
  m.tasks.push({
    id: r.body.data.taskId,
    kind,
    state: 'open',
    hold: HOLD[kind],
    charged: 0,
    deadline: m.now + DEADLINE_MS,
    purged: false,
    idempotencyKey,
    createdAt: m.now,
  });
  m.available -= HOLD[kind];
  m.held += HOLD[kind];
}

/** The real service agrees with the model: balances over HTTP, wallet figures, ledger rows, every task. */
async function verify(m: Model, real: Real) {
  counts.checks++;
  const credit = await t.call('GET', '/api/v1/chat/credit', { key: real.apiKey });
  expect({ available: credit.body.data.available, held: credit.body.data.held }).toEqual({
    available: m.available,
    held: m.held,
  });
  const w = await t.service.ctx.db.kysely
    .selectFrom('wallets')
    .select(['spent', 'purchased', 'owed', 'reversed'])
    .where('account_id', '=', real.accountId)
    .executeTakeFirstOrThrow();
  expect({
    spent: Number(w.spent),
    purchased: Number(w.purchased),
    owed: Number(w.owed),
    reversed: Number(w.reversed),
  }).toEqual({ spent: m.spent, purchased: m.purchased, owed: m.owed, reversed: m.reversed });
  await t.checkLedger(real.accountId);
  await Promise.all(
    m.tasks.map(async (task) => {
      const r = await recordInfo(t, real.apiKey, task.id);
      const d = r.body.data;
      if (task.state === 'open') expect(['queued', 'running'], task.id).toContain(d.state);
      else
        expect({ id: task.id, state: d.state, credits: d.credits, settled: d.settled }).toEqual({
          id: task.id,
          state: task.state,
          credits: task.charged,
          settled: true,
        });
    }),
  );
}

/**
 * Every month of the run's history, as GET /api/v1/statements answers it: the model's figures, the
 * identity, each opening the previous closing (0 for the account's first month), and the last
 * closing the wallet's available + held.
 */
async function checkStatements(m: Model, real: Real) {
  const months = [...m.months.keys()].sort();
  let closing = 0;
  for (let month = months[0]!; month <= monthOf(m.now); month = nextMonth(month)) {
    counts.statements++;
    const r = await t.call('GET', `/api/v1/statements/${month}`, { key: real.apiKey });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const s = r.body.data;
    const x = m.months.get(month) ?? ZERO;
    const context = `${real.accountId} ${month}: ${JSON.stringify(s)}`;
    expect(s.openingBalance + s.purchases.total - s.refunds.total - s.charges.total, context).toBe(s.closingBalance);
    expect(s.openingBalance, context).toBe(closing);
    expect({ purchases: s.purchases, refunds: s.refunds, charges: s.charges.total }, context).toEqual({
      purchases: { total: x.paid + x.granted, paid: x.paid, granted: x.granted },
      refunds: {
        total: x.refunded + x.disputed + x.debtPaid - x.disputesWon,
        refunded: x.refunded,
        disputed: x.disputed,
        disputesWon: x.disputesWon,
        debtPaid: x.debtPaid,
        debtIncurred: x.debtIncurred,
        debtForgiven: x.debtForgiven,
      },
      charges: x.charges,
    });
    closing = s.closingBalance;
  }
  expect(closing, real.accountId).toBe(m.available + m.held);
}

function nextMonth(month: string): string {
  const [year, mon] = month.split('-').map(Number) as [number, number];
  return monthOf(Date.UTC(year, mon, 1));
}

class Cmd implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly label: string,
    readonly step: (m: Model, r: Real) => Promise<void>,
  ) {}
  check(): boolean {
    return true;
  }
  async run(m: Model, r: Real): Promise<void> {
    counts.commands++;
    counts[this.label.split('(')[0]] = (counts[this.label.split('(')[0]] ?? 0) + 1;
    await this.step(m, r);
    await verify(m, r);
  }
  toString(): string {
    return this.label;
  }
}

const kind = fc.constantFrom<Kind>('d', 'mini', 'fail');
const pick = <T>(list: T[], i: number): T | undefined => (list.length ? list[i % list.length] : undefined);

/**
 * The commands, one factory each: the random sequences below draw them, and HISTORY (the example
 * every property run starts with) names them one by one.
 */
const create = (k: Kind, idem: boolean) =>
  new Cmd(`create(${k},${idem})`, async (m, { apiKey }) => {
    advance(m, 60_000);
    const key = idem ? `model-${++keySeq}` : undefined;
    const r = await createTask(t, apiKey, BODIES[k], { headers: key ? { 'idempotency-key': key } : {} });
    accept(m, r, k, key);
    await settle(m);
  });

const replay = (i: number) =>
  new Cmd(`replay(${i})`, async (m, { apiKey }) => {
    // A key is replayed within its window (24 hours): the days commands can move past it (a minute of margin).
    const task = pick(
      m.tasks.filter((x) => x.idempotencyKey && m.now - x.createdAt < IDEMPOTENCY_WINDOW_MS - 60_000),
      i,
    );
    if (!task) return;
    // A replay answers its task before the debt and funds checks (docs/contracts.md): owing changes nothing here.
    const r = await createTask(t, apiKey, BODIES[task.kind], {
      headers: { 'idempotency-key': task.idempotencyKey! },
    });
    expect(r.status).toBe(202);
    expect(r.body.data.taskId).toBe(task.id);
    expect(r.headers.get('idempotent-replayed')).toBe('true');
  });

const finish = (i: number) =>
  new Cmd(`finish(${i})`, async (m) => {
    const task = pick(
      m.tasks.filter((x) => x.state === 'open' && x.deadline > m.now + 20),
      i,
    );
    if (task) gate.released.add(task.id);
    advance(m, 20);
    await settle(m);
  });

const expire = new Cmd('expire', async (m) => {
  const open = m.tasks.filter((x) => x.state === 'open');
  if (!open.length) return;
  advance(m, Math.min(...open.map((x) => x.deadline)) - m.now);
  await settle(m);
});

const retry = (i: number) =>
  new Cmd(`retry(${i})`, async (m, { apiKey }) => {
    const task = pick(m.tasks, i);
    if (!task) return;
    advance(m, 60_000);
    const r = await t.call('POST', '/api/v1/jobs/retry', { key: apiKey, body: { taskId: task.id } });
    if ((task.state === 'failed' || task.state === 'expired') && !task.purged) accept(m, r, task.kind);
    else expect(r.status, JSON.stringify(r.body)).toBeGreaterThanOrEqual(400);
    await settle(m);
  });

const purge = (i: number) =>
  new Cmd(`purge(${i})`, async (m, { apiKey }) => {
    const task = pick(m.tasks, i);
    if (!task) return;
    const r = await t.call('POST', '/api/v1/jobs/purge', { key: apiKey, body: { taskId: task.id } });
    if (task.state === 'open') expectError(r, 400, r.body.code);
    else {
      expect(r.status).toBe(200);
      task.purged = true;
    }
  });

/** An operator's grant (`addCredits`, what `credits add` runs): it pays what is owed first, as a purchase does. */
const topUp = (n: number) =>
  new Cmd(`topUp(${n})`, async (m, { accountId }) => {
    await addCredits(t.service.ctx.db, accountId, n, m.now);
    credit(m, 'granted', n);
  });

/** A pack bought in the console, paid at the loopback Stripe, credited by its signed event (paying any debt first). */
const buyPack = new Cmd('buy', async (m, { user }) => {
  const session = await buy(world, user, { pack: PACK.name });
  expect(await deliverNew(m, 'checkout.session.completed', session)).toBe('credited');
  m.sessions.push({ id: session.id, refundedAmount: 0 });
  credit(m, 'paid', PACK_CREDITS);
});

/** A refund of part of what is left of a paid charge, or of all of it (`charge.refunded`): taken back as a delta. */
const refund = (i: number, full: boolean, share: number) =>
  new Cmd(`refund(${i},${full ? 'full' : `partial ${share}`})`, async (m) => {
    // Stripe refunds no disputed charge; a charge disputed after a refund is left out too.
    const session = pick(
      m.sessions.filter((x) => !x.dispute && x.refundedAmount < PACK.price),
      i,
    );
    if (!session) return;
    const units = (PACK.price - session.refundedAmount) / UNIT;
    const amount = UNIT * (full || units < 2 ? units : 1 + (share % (units - 1)));
    expect(await deliverNew(m, 'charge.refunded', world.stripe.refund(session.id, amount))).toBe('refunded');
    const before = creditsFor(session.refundedAmount);
    session.refundedAmount += amount;
    reverse(m, 'refunded', creditsFor(session.refundedAmount) - before);
  });

/** A dispute of a whole paid charge (`charge.dispute.created`): the pack taken back, what is missing owed. */
const dispute = (i: number) =>
  new Cmd(`dispute(${i})`, async (m) => {
    const session = pick(
      m.sessions.filter((x) => !x.dispute && x.refundedAmount === 0),
      i,
    );
    if (!session) return;
    expect(await deliverNew(m, 'charge.dispute.created', world.stripe.dispute(session.id))).toBe('disputed');
    session.dispute = { ...reverse(m, 'disputed', PACK_CREDITS), won: false };
  });

/** A dispute closed as won (`charge.dispute.closed`, status won). */
const disputeWon = (i: number) =>
  new Cmd(`disputeWon(${i})`, async (m) => {
    const session = pick(
      m.sessions.filter((x) => x.dispute && !x.dispute.won),
      i,
    );
    if (!session?.dispute) return;
    const won = world.stripe.dispute(session.id, 'won');
    expect(await deliverNew(m, 'charge.dispute.closed', won)).toBe('dispute_won');
    // reversals.ts restoreDispute: of the dispute's debt, what is still owed is cancelled (at most
    // all that is owed); what it took and what a later credit paid of its debt come back, never more
    // than reversals took in all (a debt forgiven meanwhile was never taken).
    const { taken, debt } = session.dispute;
    const cancelled = Math.min(debt, m.owed);
    const returned = Math.min(taken + debt - cancelled, m.reversed);
    m.available += returned;
    m.reversed -= returned;
    m.owed -= cancelled;
    tally(m).disputesWon += returned;
    tally(m).debtForgiven += cancelled;
    session.dispute.won = true;
  });

const deliverAgain = (i: number) =>
  new Cmd(`deliverAgain(${i})`, async (m) => {
    // Stripe sends an event again: it was applied once, nothing changes (the checks after this command).
    const signed = pick(m.delivered, i);
    if (signed) expect((await deliver(t, signed)).status).toBe(200);
  });

/** An operator forgives the debt in the console (POST .../forgive-debt, audited: test/payments/forgive-debt.test.ts). */
const forgive = new Cmd('forgive', async (m, { accountId }) => {
  // Forgiving an account that owes nothing writes nothing (forgive-debt.test.ts): left out here,
  // where the operator's sign-in (a deliberate 100 ms password hash) would be most of the cost.
  if (m.owed === 0) return;
  const op = await operatorSession(m.now);
  const r = await op.call('POST', `/console/api/operator/accounts/${accountId}/forgive-debt`, {
    note: 'ledger model',
    idempotencyKey: `model-forgive-${++keySeq}`,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.data).toMatchObject({ accountId, forgiven: m.owed, replayed: false, balance: { owed: 0 } });
  tally(m).debtForgiven += m.owed;
  m.owed = 0;
});

const days = (n: number) =>
  new Cmd(`days(${n})`, async (m) => {
    // Each run starts shortly before a month's end, so a history spans two months; a run stays
    // within a few days, so the customer's console session (7 days) stays open.
    if (m.now - m.start > 4 * DAY) return;
    advance(m, n * DAY);
    await settle(m);
  });

const quoteThenCreate = (k: Kind) =>
  new Cmd(`quoteThenCreate(${k})`, async (m, { apiKey }) => {
    advance(m, 60_000);
    const q = await t.call('POST', '/api/v1/jobs/quote', { key: apiKey, body: BODIES[k] });
    if (m.owed > 0) return expectError(q, 402, 40202);
    if (m.available < HOLD[k]) return expectError(q, 402, 40201);
    expect(q.body.data.maxCredits).toBe(HOLD[k]);
    const r = await createTask(t, apiKey, {
      ...BODIES[k],
      quoteId: q.body.data.quoteId,
      expectedCredits: q.body.data.estimatedCredits,
    });
    accept(m, r, k);
    await settle(m);
  });

const expiredQuote = (k: Kind) =>
  new Cmd(`expiredQuote(${k})`, async (m, { apiKey }) => {
    const q = await t.call('POST', '/api/v1/jobs/quote', { key: apiKey, body: BODIES[k] });
    if (m.owed > 0) return expectError(q, 402, 40202);
    if (m.available < HOLD[k]) return expectError(q, 402, 40201);
    advance(m, QUOTE_TTL_MS + 1000);
    const r = await createTask(t, apiKey, {
      ...BODIES[k],
      quoteId: q.body.data.quoteId,
      expectedCredits: q.body.data.estimatedCredits,
    });
    expectError(r, 409, 40901);
    await settle(m);
  });

/**
 * The random sequences' commands. Creating and finishing a task, refunds and disputes are drawn
 * more often (listed more than once): a debt needs a reversal larger than what is available, so
 * credits held or spent before a pack is taken back.
 */
const refundArb = fc.tuple(fc.nat(), fc.boolean(), fc.nat()).map(([i, full, share]) => refund(i, full, share));
const commands = [
  fc.tuple(kind, fc.boolean()).map(([k, idem]) => create(k, idem)),
  fc.tuple(kind, fc.boolean()).map(([k, idem]) => create(k, idem)),
  fc.nat().map(replay),
  fc.nat().map(finish),
  fc.nat().map(finish),
  fc.constant(expire),
  fc.nat().map(retry),
  fc.nat().map(purge),
  fc.integer({ min: 1, max: 200 }).map(topUp),
  kind.map(quoteThenCreate),
  kind.map(expiredQuote),
  fc.constant(buyPack),
  refundArb,
  refundArb,
  refundArb,
  fc.nat().map(dispute),
  fc.nat().map(dispute),
  fc.nat().map(disputeWon),
  fc.nat().map(deliverAgain),
  fc.constant(forgive),
  fc.integer({ min: 1, max: 2 }).map(days),
];

/**
 * One history every property run begins with (fast-check's `examples`), so that each way money
 * comes back is reached whatever the seed: from a paid pack, a charge, a partial then a full
 * refund leaving a debt, new work refused, the debt forgiven; next month two packs, one refunded,
 * a task held, a dispute leaving a debt, a grant and a purchase paying it, the dispute won; events
 * delivered again; the held task charged.
 */
const HISTORY: [credits: number, hoursBeforeMonthEnd: number, commands: Iterable<fc.AsyncCommand<Model, Real>>] = [
  0,
  12,
  [
    create('d', false),
    finish(0),
    refund(0, false, 299),
    refund(0, true, 0),
    create('d', false),
    forgive,
    days(1),
    buyPack,
    buyPack,
    refund(0, true, 0),
    create('d', false),
    dispute(0),
    topUp(10),
    buyPack,
    disputeWon(0),
    deliverAgain(0),
    deliverAgain(3),
    deliverAgain(7),
    finish(0),
  ],
];

/** A dispute won after the operator forgave its debt (seed 184583437): the forgiven part never comes back; it once answered 500. */
const DISPUTE_FORGIVEN: typeof HISTORY = [0, 1, [create('d', false), dispute(0), forgive, disputeWon(0)]];

describe('ledger model (fast-check commands against a reference model)', () => {
  beforeAll(async () => {
    world = await startPaymentsWorld(
      { taskDeadlineMs: DEADLINE_MS },
      { clock, startWorker: false, deployments: [gate] },
    );
    t = world.t;
    await signUp(t, OPERATOR);
    await setRole(t.service.ctx.db, CLI_OPERATOR, OPERATOR, 'operator', clock.now());
  });
  afterAll(async () => {
    // What the histories reached: the ledger's rows by kind, over every account of the suite.
    if (t)
      for (const { kind, n } of await t.service.ctx.db.kysely
        .selectFrom('ledger_entries')
        .select(['kind', (eb) => eb.fn.countAll<number | string>().as('n')])
        .groupBy('kind')
        .execute())
        counts[`rows.${kind}`] = Number(n);
    recordCounts('ledger-model', counts);
    await world?.close();
  });

  it('matches the model after every command, and every month has the statement the model says', async () => {
    await fc.assert(
      fc.asyncProperty(
        // Small first balances mostly: a debt needs more held or spent than the credits no refund takes back.
        fc.constantFrom<number>(0, 0, 40, 150, 1000),
        fc.integer({ min: 1, max: 72 }),
        fc.commands(commands, { size: 'max', maxCommands: 20 }),
        async (credits, hoursBeforeMonthEnd, cmds) => {
          counts.runs++;
          // Each run is a new customer, starting some hours before the next month begins.
          const now = new Date(clock.now());
          const monthEnd = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
          clock.set(Math.max(clock.now(), monthEnd - hoursBeforeMonthEnd * HOUR));
          const user = await signUp(t, `ledger-model-${counts.runs}-${Date.now()}@example.test`);
          const accountId = (await user.call('GET', '/console/api/session')).body.data.accountId as string;
          const { apiKey, keyId } = (await user.call('POST', '/console/api/keys', {})).body.data;
          // The statements' key scope, as `mediaforge keys scope --account-reports on` sets it.
          await setAccountReports(t.service.ctx.db.kysely, keyId, true);
          const m: Model = {
            ...{ available: 0, held: 0, spent: 0, purchased: 0, owed: 0, reversed: 0 },
            now: clock.now(),
            start: clock.now(),
            tasks: [],
            sessions: [],
            delivered: [],
            months: new Map([[monthOf(clock.now()), { ...ZERO }]]),
          };
          if (credits > 0) {
            await addCredits(t.service.ctx.db, accountId, credits, m.now);
            credit(m, 'granted', credits);
          }
          const real: Real = { t, accountId, apiKey, user };
          try {
            // A paid pack first, so that refunds and disputes have a charge from the first command on.
            await buyPack.run(m, real);
            await fc.asyncModelRun(() => ({ model: m, real }), cmds);
            await checkStatements(m, real);
          } catch (error) {
            counts.violations++;
            throw error;
          }
        },
      ),
      // Each run signs a customer up (a deliberate 100 ms password hash): fewer, longer runs than the
      // 30 of 15 commands this test had before payments keep it to a few seconds.
      {
        numRuns: Number(process.env.MODEL_RUNS ?? 15),
        examples: [HISTORY, DISPUTE_FORGIVEN],
        // A failure's seed, as fast-check prints it, runs it again: MODEL_SEED=184583437 found dispute, forgive, dispute won.
        ...(process.env.MODEL_SEED ? { seed: Number(process.env.MODEL_SEED) } : {}),
      },
    );
    // Every way a balance moves was reached (HISTORY makes sure of it; the random runs add to it).
    const kinds = await t.service.ctx.db.kysely.selectFrom('ledger_entries').select('kind').distinct().execute();
    expect(kinds.map((k) => k.kind)).toEqual(
      expect.arrayContaining([
        'purchase',
        'grant',
        'settle',
        'refund',
        'dispute',
        'dispute_won',
        'debt',
        'debt_paid',
        'debt_forgiven',
      ]),
    );
  }, 120_000);
});
