import { createHash } from 'node:crypto';

/** JSON with keys sorted at every level, so equal requests give equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The request semantics an Idempotency-Key or a quote is bound to: normalized model, input, callback URL. */
export function requestFingerprint(model: string, normalizedInput: unknown, callbackUrl: string | null): string {
  return createHash('sha256')
    .update(canonicalJson({ model, input: normalizedInput, callBackUrl: callbackUrl }))
    .digest('base64url');
}
