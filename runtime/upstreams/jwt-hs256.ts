import { createHmac } from 'node:crypto';

/** A token's lifetime, and how far back its start is set (clocks of the two sides differ). */
const LIFETIME_SECONDS = 1800;
const SKEW_SECONDS = 5;

const base64url = (data: string | Buffer) => Buffer.from(data).toString('base64url');

/**
 * The `jwt-hs256` auth scheme of a profile: the upstream's secret is `ACCESS_KEY:SECRET_KEY`; each
 * request carries a JSON Web Token signed with HMAC-SHA256 by the secret key, whose issuer is the
 * access key, valid from 5 s ago for 30 minutes (RFC 7519), sent as `Authorization: Bearer`.
 * Undefined when the secret is not of that shape (the upstream then refuses the request).
 */
export function jwtHs256(secret: string, nowMs: number): string | undefined {
  return signedJwt(secret, nowMs)?.token;
}

/** A token reused while more than this is left of its life: a few live tokens per upstream, not one per request. */
const REUSE_LEFT_SECONDS = LIFETIME_SECONDS / 2;

/**
 * The tokens of one upstream's key: one is signed, told to `hide` (the upstream's redactor) with
 * its expiry, and reused until half its life is gone; then the next. Undefined as jwtHs256.
 */
export function jwtSigner(
  secret: string,
  hide?: (token: string, expiresAt: number) => void,
): (nowMs: number) => string | undefined {
  let current: { token: string; expiresAt: number } | undefined;
  return (nowMs) => {
    if (current && current.expiresAt - nowMs > REUSE_LEFT_SECONDS * 1000) return current.token;
    current = signedJwt(secret, nowMs);
    if (current) hide?.(current.token, current.expiresAt);
    return current?.token;
  };
}

function signedJwt(secret: string, nowMs: number): { token: string; expiresAt: number } | undefined {
  const colon = secret.indexOf(':');
  if (colon <= 0 || colon === secret.length - 1) return undefined;
  const access = secret.slice(0, colon);
  const key = secret.slice(colon + 1);
  const now = Math.floor(nowMs / 1000);
  const header = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const payload = base64url(JSON.stringify({ iss: access, exp: now + LIFETIME_SECONDS, nbf: now - SKEW_SECONDS }));
  const signature = createHmac('sha256', key).update(`${header}.${payload}`).digest('base64url');
  return { token: `${header}.${payload}.${signature}`, expiresAt: (now + LIFETIME_SECONDS) * 1000 };
}
