import { describe, expect, it } from 'vitest';
import { REDACTED, secretRedactor } from '../../../runtime/upstreams/secret-redactor.js';

/** runtime/upstreams/secret-redactor.ts: the operator's key, in every form it travels, and URL queries, out of a text. */

const KEY = 'sk-live/AbC+123=';
const PAIR = 'ACCESSKEY:s3cr3t-part';

describe('secretRedactor', () => {
  it.each([
    [
      'the key after Bearer',
      { given: { secret: KEY, text: `Authorization: Bearer ${KEY}` }, want: `Authorization: Bearer ${REDACTED}` },
    ],
    ['the key bare, twice', { given: { secret: KEY, text: `${KEY} and ${KEY}` }, want: `${REDACTED} and ${REDACTED}` }],
    [
      'the key percent-encoded, upper-case hex',
      { given: { secret: KEY, text: `key=${encodeURIComponent(KEY)}` }, want: `key=${REDACTED}` },
    ],
    [
      'the key percent-encoded, lower-case hex',
      {
        given: {
          secret: KEY,
          text: `key=${encodeURIComponent(KEY).replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase())}`,
        },
        want: `key=${REDACTED}`,
      },
    ],
    [
      'the key JSON-escaped',
      { given: { secret: 'a"b\\c-long', text: JSON.stringify({ key: 'a"b\\c-long' }) }, want: `{"key":"${REDACTED}"}` },
    ],
    [
      'an ACCESS:SECRET key whole, not left in parts',
      { given: { secret: PAIR, text: `Key ${PAIR}` }, want: `Key ${REDACTED}` },
    ],
    [
      'each part of an ACCESS:SECRET key on its own',
      { given: { secret: PAIR, text: 'iss=ACCESSKEY sig=s3cr3t-part' }, want: `iss=${REDACTED} sig=${REDACTED}` },
    ],
    [
      'a part shorter than four characters, kept (it would blank common words)',
      { given: { secret: 'abc:longer-secret', text: 'abc def longer-secret' }, want: `abc def ${REDACTED}` },
    ],
    [
      'the query and fragment of a URL',
      {
        given: { secret: KEY, text: 'GET https://up.example/v1/jobs/1?sig=xyz&exp=9#frag failed' },
        want: `GET https://up.example/v1/jobs/1?${REDACTED} failed`,
      },
    ],
    [
      'a URL without a query, as it is',
      {
        given: { secret: KEY, text: 'see https://up.example/docs/errors' },
        want: 'see https://up.example/docs/errors',
      },
    ],
    [
      'a text without the key, as it is',
      { given: { secret: KEY, text: 'upstream said 503' }, want: 'upstream said 503' },
    ],
    [
      'no key configured: only URL queries go',
      {
        given: { secret: undefined, text: 'http://x.example/a?token=t plain' },
        want: `http://x.example/a?${REDACTED} plain`,
      },
    ],
  ])('hides %s', (_name, { given, want }) => {
    expect(secretRedactor(given.secret)(given.text)).toBe(want);
  });

  it('hides a credential derived from the key (a signed token) until it expires, then forgets it', () => {
    let now = 1_000;
    const redact = secretRedactor(KEY, () => now);
    const token = 'eyJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJhIn0.c2lnbmF0dXJl';
    expect(redact(`Bearer ${token}`)).toBe(`Bearer ${token}`);
    redact.hide(token, 2_000);
    expect(redact(`bad token Bearer ${token} and ${encodeURIComponent(token)}`)).toBe(
      `bad token Bearer ${REDACTED} and ${REDACTED}`,
    );
    now = 2_000;
    expect(redact(`Bearer ${token}`)).toBe(`Bearer ${token}`);
  });
});
