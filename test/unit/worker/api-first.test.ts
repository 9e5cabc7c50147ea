import { describe, expect, it } from 'vitest';
import { FLOOR, LAG_MS, nextShare, slotsAt, STEP } from '../../../runtime/worker/api-first.js';

describe('nextShare: the worker’s share of its slots after a turn', () => {
  it.each([
    [
      'no request came: every slot, however late the loop',
      { given: { share: FLOOR, apiBusy: false, lagMs: 500 }, want: 1 },
    ],
    [
      'requests on a loop running late: a quarter of the share',
      { given: { share: 1, apiBusy: true, lagMs: 40 }, want: 0.25 },
    ],
    ['late again: never below the floor', { given: { share: FLOOR * 2, apiBusy: true, lagMs: 40 }, want: FLOOR }],
    ['requests on a loop on time: a step back', { given: { share: 0.25, apiBusy: true, lagMs: 2 }, want: 0.25 + STEP }],
    ['on time at every slot already: stays whole', { given: { share: 1, apiBusy: true, lagMs: 0 }, want: 1 }],
    [
      'exactly the allowed delay counts as on time',
      { given: { share: 0.5, apiBusy: true, lagMs: LAG_MS }, want: 0.5 + STEP },
    ],
  ] as const)('%s', (_name, { given, want }) => {
    expect(nextShare(given.share, { apiBusy: given.apiBusy, lagMs: given.lagMs })).toBe(want);
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
