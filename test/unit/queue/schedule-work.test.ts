import { describe, expect, it } from 'vitest';
import { type NewWork, newWorkRow } from '../../../runtime/queue/schedule-work.js';

const NOW = 1_767_225_600_000;
const UNSTARTED = { lease_owner: null, lease_until: null, attempts: 0, done_at: null, created_at: NOW };

describe('newWorkRow: a new item of each kind of payload', () => {
  it.each([
    [
      'a task item',
      {
        given: { kind: 'poll', taskId: 'task_1', dueAt: NOW + 5 },
        want: { kind: 'poll', task_id: 'task_1', ref_id: null, due_at: NOW + 5 },
      },
    ],
    [
      'a run after a passed check',
      {
        given: { kind: 'run', taskId: 'task_1', refId: 'references-checked', dueAt: NOW },
        want: { kind: 'run', task_id: 'task_1', ref_id: 'references-checked', due_at: NOW },
      },
    ],
    [
      'a delivery (ref: the delivery id)',
      {
        given: { kind: 'deliver', taskId: 'task_2', refId: 'dlv_1', dueAt: NOW },
        want: { kind: 'deliver', task_id: 'task_2', ref_id: 'dlv_1', due_at: NOW },
      },
    ],
    [
      'a recurring item of no task',
      {
        given: { kind: 'expire-uploads', dueAt: NOW },
        want: { kind: 'expire-uploads', task_id: null, ref_id: null, due_at: NOW },
      },
    ],
  ] satisfies [string, { given: NewWork; want: object }][])('%s', (_name, { given, want }) => {
    expect(newWorkRow(NOW, given)).toEqual({ ...want, ...UNSTARTED });
  });
});
