import { describe, expect, it } from 'vitest';
import { kindFilter, type Lane } from '../../../runtime/queue/lanes.js';

const tasks: Lane = { name: 'tasks', kinds: 'others', concurrency: 8 };
const checks: Lane = { name: 'checks', kinds: ['check'], concurrency: 4 };
const deliveries: Lane = { name: 'deliveries', kinds: ['deliver'], concurrency: 16 };

describe('kindFilter: which kinds a lane claims', () => {
  it.each([
    [
      'a lane of named kinds takes them',
      { given: { lane: checks, lanes: [tasks, checks, deliveries] }, want: { kinds: ['check'], except: false } },
    ],
    [
      'the others lane takes every kind the other lanes do not name',
      {
        given: { lane: tasks, lanes: [tasks, checks, deliveries] },
        want: { kinds: ['check', 'deliver'], except: true },
      },
    ],
    [
      'the others lane alone takes everything',
      { given: { lane: tasks, lanes: [tasks] }, want: { kinds: [], except: true } },
    ],
    [
      'a lane of several kinds takes all of them',
      {
        given: {
          lane: { name: 'upstream', kinds: ['poll', 'reconcile'], concurrency: 2 } satisfies Lane,
          lanes: [tasks],
        },
        want: { kinds: ['poll', 'reconcile'], except: false },
      },
    ],
  ] as const)('%s', (_name, { given, want }) => {
    expect(kindFilter(given.lane, given.lanes)).toEqual(want);
  });
});
