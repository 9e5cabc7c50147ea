import { describe, expect, it } from 'vitest';
import { FLOOR, LAG_MS, nextShare, STEP, slotsAt, startable, TURN_MS } from '../../../runtime/worker/api-first.js';

describe('nextShare: the worker’s share of its slots after a turn', () => {
  it.each([
    [
      'no request came: every slot, however late the loop',
      { given: { share: FLOOR, requests: 0, items: 0, lagMs: 500 }, want: 1 },
    ],
    ['fewer requests than items: every slot', { given: { share: 1, requests: 30, items: 120, lagMs: 40 }, want: 1 }],
    [
      'a held-back worker’s items count as at every slot',
      { given: { share: 0.25, requests: 100, items: 30, lagMs: 40 }, want: 1 },
    ],
    [
      'more requests than items, the loop late: a quarter',
      { given: { share: 1, requests: 200, items: 20, lagMs: 40 }, want: 0.25 },
    ],
    [
      'late again: never below the floor',
      { given: { share: FLOOR * 2, requests: 200, items: 0, lagMs: 40 }, want: FLOOR },
    ],
    [
      'more requests than items, the loop on time: a step back',
      { given: { share: 0.25, requests: 200, items: 2, lagMs: 2 }, want: 0.25 + STEP },
    ],
    [
      'on time at every slot already: stays whole',
      { given: { share: 1, requests: 200, items: 20, lagMs: 0 }, want: 1 },
    ],
    [
      'exactly the allowed delay counts as on time',
      { given: { share: 0.5, requests: 200, items: 20, lagMs: LAG_MS }, want: 0.5 + STEP },
    ],
  ] as const)('%s', (_name, { given, want }) => {
    const { share, ...turn } = given;
    expect(nextShare(share, turn)).toBe(want);
  });
});

describe('slotsAt: a lane’s slots at a share', () => {
  it.each([
    ['every slot at a whole share', { given: { share: 1, concurrency: 32 }, want: 32 }],
    ['a quarter, rounded down', { given: { share: 0.25, concurrency: 30 }, want: 7 }],
    ['one slot at the floor: the worker slows, it never stops', { given: { share: FLOOR, concurrency: 32 }, want: 1 }],
    ['a lane without slots stays without', { given: { share: 1, concurrency: 0 }, want: 0 }],
  ] as const)('%s', (_name, { given, want }) => {
    expect(slotsAt(given.share, given.concurrency)).toBe(want);
  });
});

describe('startable: the items a lane may start now', () => {
  it.each([
    ['its free slots', { given: { concurrency: 32, slots: 32, running: 5, msSinceStart: 0 }, want: 27 }],
    [
      'held back, its free slots at the share',
      { given: { concurrency: 32, slots: 8, running: 5, msSinceStart: 0 }, want: 3 },
    ],
    [
      'held back below what its long items hold: one a turn, so another account’s task starts',
      { given: { concurrency: 3, slots: 1, running: 2, msSinceStart: TURN_MS }, want: 1 },
    ],
    [
      'held back below what they hold, one started within the turn: none',
      { given: { concurrency: 3, slots: 1, running: 2, msSinceStart: TURN_MS - 1 }, want: 0 },
    ],
    [
      'every slot of the lane running: none, however long ago',
      { given: { concurrency: 3, slots: 1, running: 3, msSinceStart: 60_000 }, want: 0 },
    ],
    ['a lane without slots: none', { given: { concurrency: 0, slots: 0, running: 0, msSinceStart: 60_000 }, want: 0 }],
  ] as const)('%s', (_name, { given, want }) => {
    expect(startable(given)).toBe(want);
  });
});
