import { createHash, createHmac, randomBytes } from 'node:crypto';

/**
 * Both signature schemes of the specification's 'Events' section. Signatures are made at send
 * time, with a fresh timestamp and the secret current at that moment.
 */

/**
 * Task callback: base64(HMAC-SHA256(secret, "<taskId>.<timestamp>.<sha256_hex(raw body)>")).
 * The HMAC key is the account's webhook signing secret exactly as shown to the user: the UTF-8
 * bytes of the whole string, `whsec_` prefix included (not Base64-decoded; that is the Standard
 * Webhooks rule for account endpoints only).
 */
export function signCallback(secret: string, taskId: string, timestamp: number, body: string | Buffer): string {
  const bodyHash = createHash('sha256').update(body).digest('hex');
  return createHmac('sha256', secret).update(`${taskId}.${timestamp}.${bodyHash}`, 'utf8').digest('base64');
}

/** The HMAC key of a Standard Webhooks secret: the Base64-decoded part after `whsec_`. */
export function endpointKey(secret: string): Buffer {
  if (!secret.startsWith('whsec_')) throw new Error('an endpoint secret starts with whsec_');
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  if (key.length === 0) throw new Error('empty endpoint secret');
  return key;
}

/** One Standard Webhooks signature: `v1,` + base64(HMAC-SHA256(key, "<id>.<timestamp>.<body>")). */
export function signEndpoint(secret: string, id: string, timestamp: number, body: string | Buffer): string {
  const hmac = createHmac('sha256', endpointKey(secret)).update(`${id}.${timestamp}.`, 'utf8');
  return `v1,${hmac.update(body).digest('base64')}`;
}

/** The `webhook-signature` header: the current secret's signature first, then the previous one's while it is still valid. */
export function endpointSignatureHeader(
  secrets: string[],
  id: string,
  timestamp: number,
  body: string | Buffer,
): string {
  return secrets.map((secret) => signEndpoint(secret, id, timestamp, body)).join(' ');
}

/** A new Standard Webhooks secret: whsec_ + Base64 of 32 random bytes (the same shape as the account secret). */
export function newEndpointSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** Unix seconds of a clock reading: the value of both timestamp headers. */
export function unixSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}
