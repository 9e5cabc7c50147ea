import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, requestFingerprint } from '../../../runtime/idempotency/fingerprint.js';

/**
 * runtime/idempotency/fingerprint.ts: Idempotency-Keys and quotes store these fingerprints, so a
 * request must fingerprint to the same value in every version. The values below were computed by
 * the first version (main at e2d8253); `firstVersion` is that version's code, compared on random values.
 */

function firstCanonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(firstCanonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${firstCanonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

function firstVersion(model: string, normalizedInput: unknown, callbackUrl: string | null): string {
  return createHash('sha256')
    .update(firstCanonicalJson({ model, input: normalizedInput, callBackUrl: callbackUrl }))
    .digest('base64url');
}

const MODEL = 'vendor_b/family_c-2.6/reference-to-video';

describe('requestFingerprint', () => {
  it.each([
    [
      'a typical request',
      MODEL,
      {
        prompt: 'A cat on the moon',
        duration_seconds: 5,
        resolution: '720p',
        reference_video_urls: ['https://example.com/a.mp4'],
        seed: 42,
      },
      null,
      'ilbVleAWhyjGCj5OfL3YXUqaDN0Fnua0EckgjlvibZY',
    ],
    [
      'unsorted keys, nested values, escapes, a callback URL',
      'm',
      { b: 1, a: [1, 'x', null, true, { z: -0, y: 1.5e300 }], é: 'ünïcødé \u2028 \ud800 "q" \\' },
      'https://hooks.example.com/x?y=1',
      'T5opcSAL62RaXPZWsKS6quc1hMhArd2HOymyg1NMYfs',
    ],
    ['an empty input', 'm', {}, null, 'pI4Fq_gdNIMkhfurRyfAojPEDbQlIo8VzmevhBhI95A'],
    [
      'undefined members and items, a function',
      'm',
      { nested: { deeper: { list: [[], [{}], [[1]]] } }, u: undefined, arr: [undefined, 1, () => 1] },
      null,
      '3ZBKP8m6fthfnP-RveT2jJlnbeDI1lGq1gRQEdmLuHc',
    ],
  ])('keeps the first version’s value for %s', (_name, model, input, callbackUrl, want) => {
    expect(requestFingerprint(model, input, callbackUrl)).toBe(want);
    expect(firstVersion(model, input, callbackUrl)).toBe(want);
  });

  it('gives the first version’s text and value for random JSON values', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const KEYS = ['a', 'b', 'prompt', 'image_urls', '', 'Z', 'é', '10', '2', '__x', 'k"q'];
    const value = (depth: number): unknown => {
      const pick = Math.floor(random() * (depth > 3 ? 6 : 9));
      switch (pick) {
        case 0:
          return null;
        case 1:
          return random() < 0.5;
        case 2:
          return Math.round((random() - 0.5) * 1e6) / (random() < 0.5 ? 1 : 1000);
        case 3:
          return `s${String.fromCharCode(Math.floor(random() * 0x3000))}\n${Math.floor(random() * 100)}`;
        case 4:
          return undefined;
        case 5:
          return 'service://a/asset_1';
        case 6:
        case 7:
          return Object.fromEntries(
            Array.from({ length: Math.floor(random() * 5) }, () => [
              KEYS[Math.floor(random() * KEYS.length)],
              value(depth + 1),
            ]),
          );
        default:
          return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
      }
    };
    for (let i = 0; i < 2000; i++) {
      const input = value(0);
      const callbackUrl = random() < 0.3 ? `https://example.com/${i}` : null;
      expect(canonicalJson(input)).toBe(firstCanonicalJson(input));
      expect(requestFingerprint(MODEL, input, callbackUrl)).toBe(firstVersion(MODEL, input, callbackUrl));
    }
  });
});
