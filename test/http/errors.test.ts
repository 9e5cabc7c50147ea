import { describe, expect, it } from 'vitest';
import { codeMessage } from '../../generated/errors.js';
import { waitForTerminal } from '../support/service.js';
import { serviceForSuite } from '../support/suite-service.js';
import {
  bodyD,
  checkBalance,
  createTask,
  expectError,
  expectOk,
  IMAGE,
  MODEL_D,
  PRICE_D,
  recordInfo,
} from './helpers.js';

const CREATE = '/api/v1/jobs/createTask';

/** Every error is the envelope with a business code, and none of them moves money. */
describe('errors of createTask and the task reads', () => {
  const svc = serviceForSuite(100);

  const unchanged = () =>
    checkBalance(svc.t, svc.account.accountId, svc.account.apiKey, { available: 100, held: 0, spent: 0, total: 100 });

  describe('bodies that are not a request', () => {
    it.each([
      ['malformed JSON', 40003, '{"model": "x", ', 'application/json'],
      ['an empty JSON body', 40003, '', 'application/json'],
      ['a text/plain body', 40004, JSON.stringify(bodyD()), 'text/plain'],
      ['a form body', 40004, 'model=x', 'application/x-www-form-urlencoded'],
      ['a JSON array', 40001, '[]', 'application/json'],
      ['a prototype-polluting key', 40003, '{"__proto__": {"x": 1}, "model": "m", "input": {}}', 'application/json'],
    ])('%s is 400 %d', async (_name, code, rawBody, contentType) => {
      const r = await svc.t.call('POST', CREATE, {
        key: svc.account.apiKey,
        rawBody,
        headers: { 'content-type': contentType },
      });
      expectError(r, 400, code);
      await unchanged();
    });

    it.each([
      ['createTask', CREATE, bodyD('x'.repeat(1024 * 1024 + 10))],
      ['retry', '/api/v1/jobs/retry', { taskId: 'x'.repeat(1024 * 1024 + 10) }],
      ['quote', '/api/v1/jobs/quote', bodyD('x'.repeat(1024 * 1024 + 10))],
    ])('a body over 1 MiB is 413 41301 (%s)', async (_name, path, body) => {
      const r = await svc.t.call('POST', path, { key: svc.account.apiKey, body });
      expectError(r, 413, 41301);
      await unchanged();
    });
  });

  describe('requests outside the published limits', () => {
    it('an unknown model is 400 40005 naming the model', async () => {
      const r = await createTask(svc.t, svc.account.apiKey, {
        model: 'vendor_z/nothing/reference-to-video',
        input: { prompt: 'x' },
      });
      expectError(r, 400, 40005);
      expect(r.body.msg).toContain('vendor_z/nothing/reference-to-video');
      await unchanged();
    });

    it.each([
      [
        'an unknown input field',
        { ...bodyD(), input: { ...bodyD().input, colour: 'red' } },
        [{ path: 'input.colour', rule: 'unknown_field' }],
      ],
      ['an unknown body field', { ...bodyD(), colour: 'red' }, [{ path: 'colour', rule: 'unknown_field' }]],
      [
        'a duration above the range',
        bodyD(undefined, { duration_seconds: 16 }),
        [{ path: 'input.duration_seconds', rule: 'maximum' }],
      ],
      [
        'a duration below the range',
        bodyD(undefined, { duration_seconds: 3 }),
        [{ path: 'input.duration_seconds', rule: 'minimum' }],
      ],
      [
        '-1 where the range has no auto value',
        bodyD(undefined, { duration_seconds: -1 }),
        [{ path: 'input.duration_seconds' }],
      ],
      [
        'duration 4 at 2k (4 s only at 768p)',
        bodyD(undefined, { duration_seconds: 4, resolution: '2k' }),
        [{ path: 'input.resolution', rule: 'duration-4-only-at-768p' }],
      ],
      [
        'a resolution the model lacks',
        bodyD(undefined, { resolution: '4k' }),
        [{ path: 'input.resolution', rule: 'enum' }],
      ],
      [
        'no prompt',
        { model: MODEL_D, input: { reference_image_urls: [IMAGE] } },
        [{ path: 'input.prompt', rule: 'required' }],
      ],
      ['no input', { model: MODEL_D }, [{ path: 'input', rule: 'required' }]],
      [
        'two problems at once',
        { ...bodyD(), input: { ...bodyD().input, colour: 'red', duration_seconds: 99 } },
        [
          { path: 'input.colour', rule: 'unknown_field' },
          { path: 'input.duration_seconds', rule: 'maximum' },
        ],
      ],
    ])('%s is 400 40001 listing each problem with path, rule and message', async (_name, body, problems) => {
      const r = await createTask(svc.t, svc.account.apiKey, body);
      expectError(r, 400, 40001);
      const errors = r.body.data.errors as { path: string; rule: string; message: string }[];
      for (const problem of problems) expect(errors).toContainEqual(expect.objectContaining(problem));
      for (const e of errors) expect(e.message).toMatch(/\S/);
      await unchanged();
    });

    it.each([
      ['http instead of https', 'http://example.com/hook'],
      ['a user and password', 'https://user:pw@example.com/hook'],
      ['a loopback address', 'https://127.0.0.1/hook'],
      ['a private address', 'https://10.1.2.3/hook'],
      ['a name resolving to loopback', 'https://localhost/hook'],
      ['an IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/hook'],
      ['a port other than 443', 'https://example.com:8443/hook'],
      ['not a URL', 'not a url'],
    ])('a callback URL with %s is 400 40002 "Invalid callback URL"', async (_name, callBackUrl) => {
      const r = await createTask(svc.t, svc.account.apiKey, { ...bodyD(), callBackUrl });
      expectError(r, 400, 40002);
      expect(r.body.msg).toBe('Invalid callback URL');
      const de = await createTask(
        svc.t,
        svc.account.apiKey,
        { ...bodyD(), callBackUrl },
        { headers: { 'accept-language': 'de' } },
      );
      expectError(de, 400, 40002);
      expect(de.body.msg).toBe('Ungültige Callback-URL');
      await unchanged();
    });

    it.each([
      ['a loopback http URL', 'http://127.0.0.1:9000/hook', true],
      ['a name resolving to loopback', 'https://localhost/hook', true],
      ['a private address', 'https://10.1.2.3/hook', true],
      ['a port other than 443', 'https://example.com:8443/hook', true],
      ['a user and password', 'https://user:pw@example.com/hook', false],
      ['not a URL', 'not a url', false],
    ])(
      'a callback URL with %s: the two settings that would allow it named, in the caller language (%s)',
      async (_name, callBackUrl, hinted) => {
        for (const [language, phrase] of [
          ['en', 'A test installation allows them with'],
          ['de', 'Eine Testinstallation erlaubt sie mit'],
        ]) {
          const r = await createTask(
            svc.t,
            svc.account.apiKey,
            { ...bodyD(), callBackUrl },
            { headers: { 'accept-language': language } },
          );
          expectError(r, 400, 40002);
          if (!hinted) {
            expect(r.body.data).toEqual({ param: 'callBackUrl' });
            continue;
          }
          expect(r.body.data.errors).toHaveLength(1);
          const [hint] = r.body.data.errors;
          expect(hint).toMatchObject({ path: 'callBackUrl', rule: 'callback_url_not_public' });
          expect(hint.message).toContain(phrase);
          expect(hint.message).toContain('MEDIAFORGE_WEBHOOK_ALLOW_PRIVATE=1');
          expect(hint.message).toContain('MEDIAFORGE_WEBHOOK_ALLOW_INSECURE=1');
        }
        await unchanged();
      },
    );

    it('a balance short of the hold is 402 40201', async () => {
      const poor = await svc.t.account(PRICE_D - 1);
      expectError(await createTask(svc.t, poor.apiKey, bodyD()), 402, 40201);
      await checkBalance(svc.t, poor.accountId, poor.apiKey, { available: PRICE_D - 1, held: 0 });
    });
  });

  describe('reading tasks', () => {
    it.each([
      ['no taskId', '/api/v1/jobs/recordInfo'],
      ['an empty taskId', '/api/v1/jobs/recordInfo?taskId='],
    ])('recordInfo with %s is 400', async (_name, path) => {
      const r = await svc.t.call('GET', path, { key: svc.account.apiKey });
      expectError(r, 400, 40008);
      expect(r.body.data).toMatchObject({ param: 'taskId' });
    });

    it('an unknown task is 404 40401', async () => {
      expectError(await recordInfo(svc.t, svc.account.apiKey, 'task_unknown000000000'), 404, 40401);
    });

    it("another key's task is a 404 identical to an unknown task's but for request_id", async () => {
      const owner = await svc.t.account(100);
      const created = await createTask(svc.t, owner.apiKey, bodyD());
      const taskId = created.body.data.taskId;
      await waitForTerminal(svc.t, owner.apiKey, taskId);
      const sibling = await svc.t.siblingKey(owner.accountId);
      const stranger = (await svc.t.account(100)).apiKey;
      const unknown = await recordInfo(svc.t, sibling, 'task_unknown000000000');
      for (const key of [sibling, stranger]) {
        const r = await recordInfo(svc.t, key, taskId);
        expectError(r, 404, 40401);
        expect({ ...r.body, request_id: null }).toEqual({ ...unknown.body, request_id: null });
        expect(JSON.stringify(r.body)).not.toContain(taskId);
      }
      expectOk(await recordInfo(svc.t, owner.apiKey, taskId));
    });
  });

  it('an unknown route is 404 40404 in the envelope', async () => {
    for (const [method, path] of [
      ['GET', '/api/v1/nothing-here'],
      ['POST', '/api/v1/jobs/cancel'],
      ['GET', '/nothing-here'],
    ]) {
      const r = await svc.t.call(method, path, { key: svc.account.apiKey });
      expectError(r, 404, 40404);
      expect(r.body.data).toBeNull();
    }
  });

  const WRONG_METHODS: [string, { given: [string, string]; want: { allow: string; compat: boolean } }][] = [
    ['GET on a POST operation', { given: ['GET', '/api/v1/jobs/createTask'], want: { allow: 'POST', compat: false } }],
    [
      'DELETE on a path with a parameter',
      { given: ['DELETE', '/api/v1/files/file_x/commit'], want: { allow: 'POST', compat: false } },
    ],
    ['POST on the landing page', { given: ['POST', '/'], want: { allow: 'GET, HEAD', compat: false } }],
    ['PUT on the compatible layer', { given: ['PUT', '/v1/videos'], want: { allow: 'GET, HEAD, POST', compat: true } }],
  ];
  it.each(WRONG_METHODS)(
    'a wrong method on a known path is 405 with Allow: %s',
    async (_name, { given: [method, path], want }) => {
      const r = await svc.t.call(method, path, { key: svc.account.apiKey, headers: { 'accept-language': 'de' } });
      expect(r.status).toBe(405);
      expect(r.headers.get('allow')).toBe(want.allow);
      const msg = codeMessage('method_not_allowed', 'de', { method, allow: want.allow });
      if (want.compat)
        expect(r.body).toEqual({
          error: { message: msg, type: 'invalid_request_error', param: null, code: 'method_not_allowed' },
        });
      else expect(r.body).toMatchObject({ code: 40501, msg, data: null });
    },
  );
});

describe('no deployment available', () => {
  const svc = serviceForSuite(undefined, {}, { deployments: [] });

  it.each([
    ['createTask', CREATE],
    ['quote', '/api/v1/jobs/quote'],
  ])('%s is 503 50301 with nothing held', async (_name, path) => {
    const { accountId, apiKey } = await svc.t.account(100);
    expectError(await svc.t.call('POST', path, { key: apiKey, body: bodyD() }), 503, 50301);
    await checkBalance(svc.t, accountId, apiKey, { available: 100, held: 0, total: 100 });
  });
});
