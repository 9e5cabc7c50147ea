import { createHmac, timingSafeEqual } from 'node:crypto';

export const QUOTE_TTL_MS = 5 * 60 * 1000;

/** What a quote binds: who asked, for what request, at what price, until when. */
export interface QuoteClaims {
  accountId: string;
  keyId: string;
  fingerprint: string;
  estimatedCredits: number;
  maxCredits: number;
  expiresAt: number;
}

/** A quote id is its own signed claims (HMAC-SHA256), so quoting writes nothing to the database. */
export function signQuote(secret: string, claims: QuoteClaims): string {
  const body = Buffer.from(
    JSON.stringify([
      claims.accountId,
      claims.keyId,
      claims.fingerprint,
      claims.estimatedCredits,
      claims.maxCredits,
      claims.expiresAt,
    ]),
  ).toString('base64url');
  return `q1.${body}.${mac(secret, body)}`;
}

export function verifyQuote(secret: string, quoteId: string): QuoteClaims | undefined {
  const [version, body, signature] = quoteId.split('.');
  if (version !== 'q1' || !body || !signature) return undefined;
  const expected = Buffer.from(mac(secret, body));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
  try {
    const [accountId, keyId, fingerprint, estimatedCredits, maxCredits, expiresAt] = JSON.parse(
      Buffer.from(body, 'base64url').toString('utf8'),
    );
    return { accountId, keyId, fingerprint, estimatedCredits, maxCredits, expiresAt };
  } catch {
    return undefined;
  }
}

function mac(secret: string, body: string): string {
  return createHmac('sha256', secret).update(`quote.${body}`).digest('base64url');
}
