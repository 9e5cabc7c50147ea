import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCredits } from '../../runtime/accounts/accounts.js';
import { ManualClock } from '../../runtime/clock.js';
import { bodyD, createTask, expectError, IMAGE, MODEL_MINI, recordInfo } from '../http/helpers.js';
import { startTestService, type TestService } from '../support/service.js';
import { FAIL, GatedDeployment, recordCounts, simulatorAutoSeconds } from './support.js';

/**
 * Model-based test of the ledger: random sequences of commands run against the real service
 * (over HTTP, worker driven by hand, time on a ManualClock) and against a small reference model;
 * after every command the balances, every task's state and charge, and the ledger rows agree.
 */
type Kind = 'd' | 'mini' | 'fail';
const BODIES: Record<Kind, object> = {
  d: bodyD(),
  mini: {
    model: MODEL_MINI,
    input: {
      prompt: 'a slow pan across a city, @Image1 as the skyline',
      reference_image_urls: [IMAGE],
      duration_seconds: -1,
    },
  },
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
}
interface Model {
  available: number;
  held: number;
  spent: number;
  purchased: number;
  now: number;
  tasks: MTask[];
}
interface Real {
  t: TestService;
  accountId: string;
  apiKey: string;
}

const counts: Record<string, number> = { runs: 0, commands: 0, checks: 0, violations: 0 };
let keySeq = 0;
let t: TestService;
const clock = new ManualClock(Date.UTC(2026, 0, 1));
const gate = new GatedDeployment(() => clock.now());

function advance(m: Model, ms: number) {
  m.now += ms;
  clock.set(m.now);
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
      }
    }
  }
}

function accept(m: Model, r: { status: number; body: any }, kind: Kind, idempotencyKey?: string) {
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
  const w = await t.wallet(real.accountId);
  expect({ spent: w.spent, purchased: w.purchased }).toEqual({ spent: m.spent, purchased: m.purchased });
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

const commands = [
  fc.tuple(kind, fc.boolean()).map(
    ([k, idem]) =>
      new Cmd(`create(${k},${idem})`, async (m, { apiKey }) => {
        advance(m, 60_000);
        const key = idem ? `model-${++keySeq}` : undefined;
        const r = await createTask(t, apiKey, BODIES[k], { headers: key ? { 'idempotency-key': key } : {} });
        accept(m, r, k, key);
        await settle(m);
      }),
  ),
  fc.nat().map(
    (i) =>
      new Cmd(`replay(${i})`, async (m, { apiKey }) => {
        const task = pick(
          m.tasks.filter((x) => x.idempotencyKey),
          i,
        );
        if (!task) return;
        const r = await createTask(t, apiKey, BODIES[task.kind], {
          headers: { 'idempotency-key': task.idempotencyKey! },
        });
        expect(r.status).toBe(202);
        expect(r.body.data.taskId).toBe(task.id);
        expect(r.headers.get('idempotent-replayed')).toBe('true');
      }),
  ),
  fc.nat().map(
    (i) =>
      new Cmd(`finish(${i})`, async (m) => {
        const task = pick(
          m.tasks.filter((x) => x.state === 'open' && x.deadline > m.now + 20),
          i,
        );
        if (task) gate.released.add(task.id);
        advance(m, 20);
        await settle(m);
      }),
  ),
  fc.constant(
    new Cmd('expire', async (m) => {
      const open = m.tasks.filter((x) => x.state === 'open');
      if (!open.length) return;
      advance(m, Math.min(...open.map((x) => x.deadline)) - m.now);
      await settle(m);
    }),
  ),
  fc.nat().map(
    (i) =>
      new Cmd(`retry(${i})`, async (m, { apiKey }) => {
        const task = pick(m.tasks, i);
        if (!task) return;
        advance(m, 60_000);
        const r = await t.call('POST', '/api/v1/jobs/retry', { key: apiKey, body: { taskId: task.id } });
        if ((task.state === 'failed' || task.state === 'expired') && !task.purged) accept(m, r, task.kind);
        else expect(r.status, JSON.stringify(r.body)).toBeGreaterThanOrEqual(400);
        await settle(m);
      }),
  ),
  fc.nat().map(
    (i) =>
      new Cmd(`purge(${i})`, async (m, { apiKey }) => {
        const task = pick(m.tasks, i);
        if (!task) return;
        const r = await t.call('POST', '/api/v1/jobs/purge', { key: apiKey, body: { taskId: task.id } });
        if (task.state === 'open') expectError(r, 400, r.body.code);
        else {
          expect(r.status).toBe(200);
          task.purged = true;
        }
      }),
  ),
  fc.integer({ min: 1, max: 200 }).map(
    (n) =>
      new Cmd(`topUp(${n})`, async (m, { accountId }) => {
        await addCredits(t.service.ctx.db, accountId, n, m.now);
        m.available += n;
        m.purchased += n;
      }),
  ),
  kind.map(
    (k) =>
      new Cmd(`quoteThenCreate(${k})`, async (m, { apiKey }) => {
        advance(m, 60_000);
        const q = await t.call('POST', '/api/v1/jobs/quote', { key: apiKey, body: BODIES[k] });
        if (m.available < HOLD[k]) return expectError(q, 402, 40201);
        expect(q.body.data.maxCredits).toBe(HOLD[k]);
        const r = await createTask(t, apiKey, {
          ...BODIES[k],
          quoteId: q.body.data.quoteId,
          expectedCredits: q.body.data.estimatedCredits,
        });
        accept(m, r, k);
        await settle(m);
      }),
  ),
  kind.map(
    (k) =>
      new Cmd(`expiredQuote(${k})`, async (m, { apiKey }) => {
        const q = await t.call('POST', '/api/v1/jobs/quote', { key: apiKey, body: BODIES[k] });
        if (m.available < HOLD[k]) return expectError(q, 402, 40201);
        advance(m, QUOTE_TTL_MS + 1000);
        const r = await createTask(t, apiKey, {
          ...BODIES[k],
          quoteId: q.body.data.quoteId,
          expectedCredits: q.body.data.estimatedCredits,
        });
        expectError(r, 409, 40901);
        await settle(m);
      }),
  ),
];

describe('ledger model (fast-check commands against a reference model)', () => {
  beforeAll(async () => {
    t = await startTestService({ taskDeadlineMs: DEADLINE_MS }, { clock, startWorker: false, deployments: [gate] });
  });
  afterAll(async () => {
    recordCounts('ledger-model', counts);
    await t?.close();
  });

  it('matches the model after every command', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(0, 40, 150, 400, 1000),
        fc.commands(commands, { size: 'max', maxCommands: 15 }),
        async (credits, cmds) => {
          counts.runs++;
          const { accountId, apiKey } = await t.account(credits);
          const m: Model = { available: credits, held: 0, spent: 0, purchased: credits, now: clock.now(), tasks: [] };
          try {
            await fc.asyncModelRun(() => ({ model: m, real: { t, accountId, apiKey } }), cmds);
          } catch (error) {
            counts.violations++;
            throw error;
          }
        },
      ),
      { numRuns: Number(process.env.MODEL_RUNS ?? 30) },
    );
  }, 120_000);
});
