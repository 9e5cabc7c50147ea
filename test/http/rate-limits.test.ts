/**
 * Rate-limit buckets are never a raw header value (issue 16, item 2): requests that need a key
 * count per key id once authenticated, and failed attempts per client address; every other route
 * counts per client address whatever Authorization header it carries. Several clients are several
 * loopback source addresses (127.0.0.0/8).
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { serviceForSuite } from '../support/suite-service.js';
import { requestFrom } from '../console/support.js';

const LIMIT = 4;
const bogus = (i: number) =>
  [
    `Bearer sk-service-${randomBytes(24).toString('base64url')}`,
    `Basic ${randomBytes(9).toString('base64')}`,
    `Bearer ${i}`,
    randomBytes(12).toString('hex'),
  ][i % 4];

describe('rate-limit buckets', () => {
  const svc = serviceForSuite(undefined, { rateLimitPerMinute: LIMIT });

  // [name, { given: one route and the address it is called from, want: the status of the first LIMIT calls }]
  it.each([
    [
      'an authenticated route (each call a different unknown key or scheme)',
      { address: '127.0.0.11', method: 'GET', path: '/api/v1/chat/credit', before: 401 },
    ],
    [
      'an upload PUT (no key needed)',
      { address: '127.0.0.12', method: 'PUT', path: '/api/v1/uploads/file_nothere?expires=1&sig=x', before: 'not 429' },
    ],
    [
      'a media link (no key needed)',
      { address: '127.0.0.13', method: 'GET', path: '/api/v1/media/nothing?expires=1&sig=x', before: 'not 429' },
    ],
    ['the docs', { address: '127.0.0.14', method: 'GET', path: '/docs/', before: 200 }],
  ] as const)(
    `%s: ${LIMIT + 1} calls with as many different Authorization headers from one address end in 429 42901`,
    async (_name, { address, method, path, before }) => {
      for (let i = 0; i < LIMIT; i++) {
        const r = await requestFrom(address, `${svc.t.url}${path}`, { method, headers: { authorization: bogus(i) } });
        if (before === 'not 429') expect(r.status).not.toBe(429);
        else expect(r.status).toBe(before);
      }
      const limited = await requestFrom(address, `${svc.t.url}${path}`, {
        method,
        headers: { authorization: bogus(LIMIT) },
      });
      expect([limited.status, limited.body.code]).toEqual([429, 42901]);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(limited.headers['x-ratelimit-limit']).toBe(String(LIMIT));
      expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    },
  );

  it('failed keys from one address do not limit a valid key used from another address', async () => {
    const { apiKey } = await svc.t.account(100);
    for (let i = 0; i <= LIMIT; i++)
      await requestFrom('127.0.0.21', `${svc.t.url}/api/v1/chat/credit`, { headers: { authorization: bogus(i) } });
    expect(
      (await requestFrom('127.0.0.21', `${svc.t.url}/api/v1/chat/credit`, { headers: { authorization: bogus(0) } }))
        .status,
    ).toBe(429);
    const elsewhere = await requestFrom('127.0.0.22', `${svc.t.url}/api/v1/chat/credit`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect([elsewhere.status, elsewhere.body.code]).toEqual([200, 200]);
  });

  it('two keys of one account have separate buckets, and no spelling of the header gives a key a fresh one', async () => {
    const { accountId, apiKey } = await svc.t.account(100);
    const sibling = await svc.t.siblingKey(accountId);
    const call = (authorization: string, address = '127.0.0.31') =>
      requestFrom(address, `${svc.t.url}/api/v1/chat/credit`, { headers: { authorization } });
    const remaining: string[] = [];
    for (let i = 0; i < LIMIT; i++) {
      const r = await call(`Bearer ${apiKey}`);
      expect(r.status).toBe(200);
      remaining.push(String(r.headers['x-ratelimit-remaining']));
    }
    expect(remaining).toEqual(['3', '2', '1', '0']);
    expect((await call(`Bearer ${apiKey}`)).status).toBe(429);
    // The same key spelled otherwise, and sent from other addresses: still the key's (spent) bucket, or not the key at all.
    for (const [spelling, address] of [
      [`Bearer ${apiKey}`, '127.0.0.32'],
      [`bearer ${apiKey}`, '127.0.0.33'],
      [`Bearer  ${apiKey}`, '127.0.0.34'],
      [`  Bearer ${apiKey}  `, '127.0.0.35'],
      [`BEARER ${apiKey}`, '127.0.0.36'],
    ]) {
      const r = await call(spelling, address);
      expect([spelling, r.status === 429 || r.status === 401]).toEqual([spelling, true]);
    }
    // The sibling key has a bucket of its own.
    const own = await call(`Bearer ${sibling}`, '127.0.0.37');
    expect([own.status, own.headers['x-ratelimit-remaining']]).toEqual([200, String(LIMIT - 1)]);
  });
});
