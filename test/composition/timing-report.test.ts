import { describe, expect, it } from 'vitest';
import { type FileTime, slowestLines } from '../support/timing-reporter.js';

const row = (file: string, ms: number, project = 'sqlite'): FileTime => ({
  file,
  project,
  ms,
  collectMs: 100,
  testsMs: ms - 100,
  tests: 2,
});

/** The end of `npm test`: the slowest files, as many as asked, with the total of them all. */
describe('the per-file timing report', () => {
  it.each<[string, { given: { times: FileTime[]; count: number }; want: string[] }]>([
    ['no files, no lines', { given: { times: [], count: 15 }, want: [] }],
    [
      'fewer files than asked: all of them, in the order given (slowest first)',
      {
        given: { times: [row('test/a.test.ts', 2500, 'postgres'), row('test/b.test.ts', 400)], count: 15 },
        want: [
          'Slowest 2 of 2 files (all: 2.9 s of fork time; test-times.json has every file):',
          '     2.5 s  postgres    test/a.test.ts (import 0.1 s, 2 tests)',
          '     0.4 s  sqlite      test/b.test.ts (import 0.1 s, 2 tests)',
        ],
      },
    ],
    [
      'more files than asked: the first `count`, the total over all',
      {
        given: {
          times: [row('test/a.test.ts', 3000), row('test/b.test.ts', 2000), row('test/c.test.ts', 1000)],
          count: 1,
        },
        want: [
          'Slowest 1 of 3 files (all: 6.0 s of fork time; test-times.json has every file):',
          '     3.0 s  sqlite      test/a.test.ts (import 0.1 s, 2 tests)',
        ],
      },
    ],
  ])('%s', (_name, { given, want }) => {
    expect(slowestLines(given.times, given.count)).toEqual(want);
  });
});
