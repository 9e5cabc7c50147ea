import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { jwtHs256 } from '../../../runtime/upstreams/jwt-hs256.js';

/** runtime/upstreams/jwt-hs256.ts: a profile's `jwt-hs256` auth, checked here as RFC 7519 reads a token. */

const NOW_MS = 1_800_000_000_500;
const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));

describe('jwtHs256', () => {
  it.each([
    ['an access and a secret key', { given: 'AK123:sk-secret', want: { iss: 'AK123', key: 'sk-secret' } }],
    [
      'a secret key holding a colon: the first colon splits',
      { given: 'AK:se:cret', want: { iss: 'AK', key: 'se:cret' } },
    ],
  ])('signs with %s', (_name, { given, want }) => {
    const token = jwtHs256(given, NOW_MS)!;
    const [header, payload, signature] = token.split('.');
    expect(decode(header)).toEqual({ alg: 'HS256', typ: 'JWT' });
    const now = Math.floor(NOW_MS / 1000);
    expect(decode(payload)).toEqual({ iss: want.iss, exp: now + 1800, nbf: now - 5 });
    expect(signature).toBe(createHmac('sha256', want.key).update(`${header}.${payload}`).digest('base64url'));
  });

  it.each([
    ['no colon', { given: 'justakey' }],
    ['an empty access key', { given: ':secret' }],
    ['an empty secret key', { given: 'access:' }],
    ['nothing', { given: '' }],
  ])('gives no token for %s', (_name, { given }) => {
    expect(jwtHs256(given, NOW_MS)).toBeUndefined();
  });
});
