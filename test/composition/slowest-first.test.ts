import { describe, expect, it } from 'vitest';
import { committedTimes, slowestFirst } from '../support/slowest-first.js';
import type { FileTime } from '../support/timing-reporter.js';

/** The order a run starts its files in (vitest.config.ts `sequence.sequencer`). */
describe('slowest first', () => {
  it.each<
    [
      string,
      {
        given: { keys: string[]; earlier: Record<string, number>; later: Record<string, number> };
        want: string[];
      },
    ]
  >([
    [
      'by the committed times, slowest first',
      {
        given: {
          keys: ['sqlite:a', 'sqlite:b', 'sqlite:c'],
          earlier: { 'sqlite:a': 100, 'sqlite:b': 900, 'sqlite:c': 500 },
          later: {},
        },
        want: ['sqlite:b', 'sqlite:c', 'sqlite:a'],
      },
    ],
    [
      "this checkout's last run wins where it timed the file",
      {
        given: {
          keys: ['sqlite:a', 'sqlite:b'],
          earlier: { 'sqlite:a': 100, 'sqlite:b': 900 },
          later: { 'sqlite:a': 2000 },
        },
        want: ['sqlite:a', 'sqlite:b'],
      },
    ],
    [
      'a file known to neither (a new suite) starts first, in the order given',
      {
        given: { keys: ['sqlite:old', 'sqlite:new2', 'sqlite:new1'], earlier: { 'sqlite:old': 60_000 }, later: {} },
        want: ['sqlite:new2', 'sqlite:new1', 'sqlite:old'],
      },
    ],
    [
      'the same file in two projects is two entries with their own times',
      {
        given: { keys: ['sqlite:a', 'postgres:a'], earlier: { 'sqlite:a': 100, 'postgres:a': 300 }, later: {} },
        want: ['postgres:a', 'sqlite:a'],
      },
    ],
    [
      'ties keep the order given',
      {
        given: { keys: ['sqlite:b', 'sqlite:a'], earlier: { 'sqlite:a': 100, 'sqlite:b': 100 }, later: {} },
        want: ['sqlite:b', 'sqlite:a'],
      },
    ],
  ])('%s', (_name, { given, want }) => {
    expect(slowestFirst(given.keys, given.earlier, given.later)).toEqual(want);
  });

  const row = (file: string, project: string, ms: number): FileTime => ({
    file,
    project,
    ms,
    collectMs: 0,
    testsMs: ms,
    tests: 1,
  });
  it.each<[string, { given: FileTime[]; want: [string, number][] }]>([
    [
      'a run as committed: project:file to ms rounded to 100 ms, slowest first, ties by key',
      {
        given: [
          row('test/a.test.ts', 'sqlite', 149),
          row('test/b.test.ts', 'postgres', 1_251),
          row('test/a.test.ts', 'postgres', 150),
        ],
        want: [
          ['postgres:test/b.test.ts', 1300],
          ['postgres:test/a.test.ts', 200],
          ['sqlite:test/a.test.ts', 100],
        ],
      },
    ],
  ])('%s', (_name, { given, want }) => {
    expect(Object.entries(committedTimes(given))).toEqual(want);
  });
});
