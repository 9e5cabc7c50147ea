import { describe, expect, it } from 'vitest';
import { serviceForSuite } from '../support/suite-service.js';
import { expectError } from './helpers.js';

/** /jobs/retry and /jobs/purge: `taskId` is required by the contract, so a missing or malformed one is a 400 naming it; an unknown id stays a 404. */
describe('retry and purge: taskId required', () => {
  const svc = serviceForSuite(100);

  const cases: [string, { given: unknown; want: { status: number; code: number; param?: string } }][] = [
    ['an empty body object', { given: {}, want: { status: 400, code: 40008, param: 'taskId' } }],
    ['taskId null', { given: { taskId: null }, want: { status: 400, code: 40008, param: 'taskId' } }],
    ['taskId a number', { given: { taskId: 42 }, want: { status: 400, code: 40008, param: 'taskId' } }],
    ['taskId an object', { given: { taskId: { id: 'x' } }, want: { status: 400, code: 40008, param: 'taskId' } }],
    ['taskId empty', { given: { taskId: '' }, want: { status: 400, code: 40008, param: 'taskId' } }],
    ['an unknown taskId', { given: { taskId: 'task_does_not_exist' }, want: { status: 404, code: 40401 } }],
  ];

  for (const path of ['/api/v1/jobs/retry', '/api/v1/jobs/purge']) {
    for (const [name, { given, want }] of cases) {
      it(`${path} with ${name}: ${want.status}`, async () => {
        const r = await svc.t.call('POST', path, { key: svc.account.apiKey, body: given });
        expectError(r, want.status, want.code);
        if (want.param) {
          expect(r.body.data).toMatchObject({ param: want.param });
          expect(r.body.msg).toContain('taskId');
        }
      });
    }
  }
});
