import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Context } from '../../../runtime/context.js';
import type { Deployment } from '../../../runtime/deployments/deployment.js';
import { routeCandidates, weightedOrder } from '../../../runtime/routing/candidates.js';
import { recordCallFailure } from '../../../runtime/routing/health.js';
import { DEFAULT_COOLDOWN, type Route } from '../../../runtime/routing/router.js';
import { CallWindow } from '../../../runtime/routing/call-window.js';
import { openDb, type Db } from '../../../runtime/storage/dialect.js';
import { migrateToLatest } from '../../../runtime/storage/migrate.js';

/**
 * runtime/routing/candidates.ts: the order in which a task's routes are tried. The weighted draw is
 * read with Math.random's draws given; the cool-downs are written by health.ts into a real SQLite
 * database, as the worker writes them.
 */

const route = (name: string, weight = 1, priority = 0): Route => ({
  deployment: { name } as Deployment,
  upstreamModel: `${name}-model`,
  priority,
  weight,
});
const names = (routes: Route[]) => routes.map((r) => r.deployment.name);

/** Math.random answers these, in turn, for the length of one test. */
function drawsAre(draws: number[]): void {
  let next = 0;
  vi.spyOn(Math, 'random').mockImplementation(() => draws[next++ % draws.length]);
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('weightedOrder', () => {
  it.each([
    ['no routes', { given: { routes: [], draws: [0.5] }, want: [] }],
    ['one route', { given: { routes: [route('a')], draws: [0.99] }, want: ['a'] }],
    [
      'a low draw takes the first route (A: 1 of 4)',
      { given: { routes: [route('a', 1), route('b', 3)], draws: [0.2, 0] }, want: ['a', 'b'] },
    ],
    [
      'a draw past the first weight takes the second (B: 3 of 4)',
      { given: { routes: [route('a', 1), route('b', 3)], draws: [0.25, 0] }, want: ['b', 'a'] },
    ],
    [
      'the remaining weight is drawn from again',
      {
        given: { routes: [route('a', 1), route('b', 1), route('c', 2)], draws: [0.99, 0.6, 0] },
        want: ['c', 'b', 'a'],
      },
    ],
    [
      'a route of weight 0 comes after every weighted one',
      { given: { routes: [route('a', 0), route('b', 2)], draws: [0, 0] }, want: ['b', 'a'] },
    ],
    [
      'every weight 0: the last route first, then the rest from the end',
      { given: { routes: [route('a', 0), route('b', 0), route('c', 0)], draws: [0] }, want: ['c', 'b', 'a'] },
    ],
  ])('orders %s', (_name, { given, want }) => {
    drawsAre(given.draws);
    const routes = [...given.routes];
    expect(names(weightedOrder(routes))).toEqual(want);
    expect(routes).toEqual(given.routes);
  });
});

describe('routeCandidates', () => {
  const NOW = 1_800_000_000_000;
  /** One tenant: two failing tasks of any account cool a deployment for everyone (the evidence rules have their own suite). */
  const COOLDOWN = { ...DEFAULT_COOLDOWN, failures: 2, ms: 60_000, singleTenant: true };
  let dir: string;
  let db: Db;
  let now = NOW;
  let caps: Record<string, number> = {};
  const ctx = () =>
    ({
      db,
      clock: { now: () => now },
      deployments: { maxInFlight: (name: string) => caps[name], cooldown: COOLDOWN, byName: () => undefined },
      callWindow: new CallWindow(COOLDOWN.windowMs),
      log: { warn() {}, info() {} },
    }) as unknown as Context;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mediaforge-candidates-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  beforeEach(async () => {
    db = await openDb(`sqlite:${join(dir, `${Date.now()}-${Math.random()}.db`)}`);
    await migrateToLatest(db);
    now = NOW;
    caps = {};
  });
  afterEach(async () => {
    await db.close();
  });

  it.each([
    [
      'tiers by priority, highest first, whatever the draw',
      {
        given: { routes: [route('low', 5, 0), route('high', 1, 10), route('mid', 1, 5)], failures: {}, caps: {} },
        want: { order: ['high', 'mid', 'low'], failing: [] },
      },
    ],
    [
      'within a tier, the weighted order',
      {
        given: { routes: [route('a', 1, 1), route('b', 3, 1), route('c', 1, 0)], failures: {}, caps: {} },
        want: { order: ['b', 'a', 'c'], failing: [] },
      },
    ],
    [
      'a cooling deployment left out (as many failures in a row as the cool-down counts)',
      {
        given: { routes: [route('a'), route('b')], failures: { a: 2 }, caps: {} },
        want: { order: ['b'], failing: ['a'] },
      },
    ],
    [
      'one failure: still tried, and on record as failing',
      {
        given: { routes: [route('a'), route('b')], failures: { a: 1 }, caps: {} },
        want: { order: ['b', 'a'], failing: ['a'] },
      },
    ],
    [
      'a cool-down that has run out: tried again (half-open: this task may be its trial)',
      {
        given: { routes: [route('a'), route('b')], failures: { a: 2 }, caps: {}, laterMs: 60_001 },
        want: { order: ['b', 'a'], failing: ['a'] },
      },
    ],
    [
      'a full deployment (no free slot of its maxInFlight) left out',
      {
        given: { routes: [route('a'), route('b')], failures: {}, caps: { a: 0 } },
        want: { order: ['b'], failing: [] },
      },
    ],
    [
      'a deployment with free slots kept',
      {
        given: { routes: [route('a'), route('b')], failures: {}, caps: { a: 3 } },
        want: { order: ['b', 'a'], failing: [] },
      },
    ],
    [
      'every deployment cooling or full: nothing to try',
      {
        given: { routes: [route('a'), route('b')], failures: { a: 2 }, caps: { b: 0 } },
        want: { order: [], failing: ['a'] },
      },
    ],
  ])('gives %s', async (_name, { given, want }) => {
    caps = given.caps;
    for (const [name, count] of Object.entries(given.failures as Record<string, number>))
      for (let i = 0; i < count; i++)
        await recordCallFailure(
          ctx(),
          name,
          'submit',
          { failure: 'server', message: 'refused' },
          { task: { id: `${name}-task-${i}`, account_id: 'acct_any' } },
        );
    now = NOW + ((given as { laterMs?: number }).laterMs ?? 0);
    drawsAre([0.5]);
    const { order, failing } = await routeCandidates(ctx(), given.routes, 'acct_any');
    expect(names(order)).toEqual(want.order);
    expect([...failing].sort()).toEqual(want.failing);
  });
});
