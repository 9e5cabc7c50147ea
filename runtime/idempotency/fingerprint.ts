import { hash } from 'node:crypto';

/**
 * JSON with keys sorted at every level, so equal requests give equal text. Stored fingerprints
 * depend on this exact text, quirks included (an `undefined` member reads `"k":undefined`, an
 * `undefined` item of an array leaves its place empty, as `Array.prototype.join` did in the first
 * version): test/unit/idempotency/fingerprint.test.ts holds it to that version's output.
 */
export function canonicalJson(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      const item = canonicalJson(value[i]) as string | undefined;
      if (item !== undefined) out += item;
    }
    return `${out}]`;
  }
  const keys = Object.keys(value);
  if (keys.length > 1) keys.sort();
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    if (i > 0) out += ',';
    out += `${JSON.stringify(keys[i])}:${canonicalJson((value as Record<string, unknown>)[keys[i]])}`;
  }
  return `${out}}`;
}

/**
 * The request semantics an Idempotency-Key or a quote is bound to: normalized model, input, callback URL.
 * The text hashed is canonicalJson({ model, input, callBackUrl }), its keys written in their sorted order.
 */
export function requestFingerprint(model: string, normalizedInput: unknown, callbackUrl: string | null): string {
  const text = `{"callBackUrl":${JSON.stringify(callbackUrl)},"input":${canonicalJson(normalizedInput)},"model":${JSON.stringify(model)}}`;
  return hash('sha256', text, 'base64url');
}
