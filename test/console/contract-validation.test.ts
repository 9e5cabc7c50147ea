/**
 * The console's bodies are checked against its contract (generated/console/requests/) by the same
 * binder as the API's, before the handler: a body the contract refuses is 40001 with one problem
 * per field, and changes nothing. Before the console was bound like the API, these were coerced
 * (`{ team: 5 }` made a personal key, `payloadVersion: "2"` was stored as 2) or their unknown
 * fields ignored.
 */
import { serviceForSuite } from '../support/suite-service.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { signUp, type ConsoleUser } from './support.js';

describe('console bodies are checked against the contract', () => {
  const svc = serviceForSuite();
  let user: ConsoleUser;

  beforeAll(async () => {
    user = await signUp(svc.t, 'contract-bodies@example.com');
  });

  const keyCount = async () => (await user.call<unknown[]>('GET', '/console/api/keys')).body.data.length;

  it.each([
    ['a team that is not text', { team: 5 }, 'team', 'type'],
    ['an unknown field', { team: 'alpha', extra: 1 }, 'extra', 'unknown_field'],
  ])('refuses a key request with %s (40001 naming the field), and makes no key', async (_name, body, path, rule) => {
    const before = await keyCount();
    const r = await user.call('POST', '/console/api/keys', body);
    expect([r.status, r.body.code, r.body.data]).toEqual([
      400,
      40001,
      { errors: [expect.objectContaining({ path, rule })] },
    ]);
    expect(await keyCount()).toBe(before);
  });

  it.each([
    ['a payload version as text', { payloadVersion: '2' }, 'payloadVersion', 'type'],
    ['a payload version the contract does not list', { payloadVersion: 3 }, 'payloadVersion', 'enum'],
  ])('refuses settings with %s, and keeps the settings', async (_name, body, path, rule) => {
    const before = (await user.call<{ payloadVersion: number }>('GET', '/console/api/session')).body.data
      .payloadVersion;
    const r = await user.call('POST', '/console/api/settings', body);
    expect([r.status, r.body.code, r.body.data]).toEqual([
      400,
      40001,
      { errors: [expect.objectContaining({ path, rule })] },
    ]);
    expect((await user.call<{ payloadVersion: number }>('GET', '/console/api/session')).body.data.payloadVersion).toBe(
      before,
    );
  });

  it('refuses an endpoint without its URL, naming it, and adds none', async () => {
    const r = await user.call('POST', '/console/api/endpoints', { events: ['task.completed'] });
    expect([r.status, r.body.code, r.body.data]).toEqual([
      400,
      40001,
      { errors: [expect.objectContaining({ path: 'url', rule: 'required' })] },
    ]);
    expect((await user.call<unknown[]>('GET', '/console/api/endpoints')).body.data).toEqual([]);
  });
});
