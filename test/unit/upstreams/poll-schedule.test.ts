import { describe, expect, it } from 'vitest';
import { firstPollMs, nextPollMs } from '../../../runtime/upstreams/poll-schedule.js';

/** runtime/upstreams/poll-schedule.ts: when to ask an upstream again about a running job. */

describe('nextPollMs', () => {
  it.each([
    [
      'at the pace kept: 25 % in 1 s is done 3 s later',
      { given: { report: { progress: 25, elapsedMs: 1000 }, hintMs: undefined, fallbackMs: 5000 }, want: 3000 },
    ],
    [
      'less the time since the progress was recorded',
      {
        given: { report: { progress: 25, elapsedMs: 1000, ageMs: 500 }, hintMs: undefined, fallbackMs: 5000 },
        want: 2500,
      },
    ],
    [
      'never later than the hint',
      { given: { report: { progress: 10, elapsedMs: 1000 }, hintMs: 2000, fallbackMs: 5000 }, want: 2000 },
    ],
    [
      'the pace when sooner than the hint',
      { given: { report: { progress: 50, elapsedMs: 1000 }, hintMs: 4000, fallbackMs: 5000 }, want: 1000 },
    ],
    [
      'no progress: the hint',
      { given: { report: { progress: 0, elapsedMs: 1000 }, hintMs: 1500, fallbackMs: 5000 }, want: 1500 },
    ],
    [
      'no progress and no hint: the fallback',
      { given: { report: { progress: 0, elapsedMs: 1000 }, hintMs: undefined, fallbackMs: 5000 }, want: 5000 },
    ],
    [
      '100 %: no pace, the fallback',
      { given: { report: { progress: 100, elapsedMs: 1000 }, hintMs: undefined, fallbackMs: 700 }, want: 700 },
    ],
    [
      'nothing elapsed: no pace',
      { given: { report: { progress: 50, elapsedMs: 0 }, hintMs: undefined, fallbackMs: 800 }, want: 800 },
    ],
    [
      'at least 100 ms',
      { given: { report: { progress: 99, elapsedMs: 1000 }, hintMs: undefined, fallbackMs: 5000 }, want: 100 },
    ],
    [
      'an old report: at least 100 ms',
      {
        given: { report: { progress: 50, elapsedMs: 1000, ageMs: 5000 }, hintMs: undefined, fallbackMs: 5000 },
        want: 100,
      },
    ],
    [
      'at most 30 s',
      { given: { report: { progress: 1, elapsedMs: 60_000 }, hintMs: undefined, fallbackMs: 5000 }, want: 30_000 },
    ],
    [
      'a hint above 30 s: 30 s',
      { given: { report: { progress: 0, elapsedMs: 0 }, hintMs: 90_000, fallbackMs: 5000 }, want: 30_000 },
    ],
  ])('%s', (_name, { given, want }) => {
    expect(nextPollMs(given.report, given.hintMs, given.fallbackMs)).toBe(want);
  });
});

describe('firstPollMs', () => {
  it.each([
    ['half the hint', { given: { hintMs: 2000, fallbackMs: 5000 }, want: 1000 }],
    ['half the fallback without a hint', { given: { hintMs: undefined, fallbackMs: 5000 }, want: 2500 }],
    ['half the fallback when the hint is longer', { given: { hintMs: 60_000, fallbackMs: 5000 }, want: 2500 }],
    ['rounded up', { given: { hintMs: 301, fallbackMs: 5000 }, want: 151 }],
    ['at least 100 ms', { given: { hintMs: 0, fallbackMs: 5000 }, want: 100 }],
  ])('%s', (_name, { given, want }) => {
    expect(firstPollMs(given.hintMs, given.fallbackMs)).toBe(want);
  });
});
