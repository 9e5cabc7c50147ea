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
  const colon = secret.indexOf(':');
  if (colon <= 0 || colon === secret.length - 1) return undefined;
  const access = secret.slice(0, colon);
  const key = secret.slice(colon + 1);
  const now = Math.floor(nowMs / 1000);
  const header = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const payload = base64url(JSON.stringify({ iss: access, exp: now + LIFETIME_SECONDS, nbf: now - SKEW_SECONDS }));
  const signature = createHmac('sha256', key).update(`${header}.${payload}`).digest('base64url');
  return `${header}.${payload}.${signature}`;
}
