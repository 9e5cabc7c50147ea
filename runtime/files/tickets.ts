import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signed upload URLs, in the style of the media links (runtime/blobs/blob-store.ts): an HMAC of
 * the service secret over the file id and the expiry, so a ticket cannot be forged, moved to
 * another file or extended. Single use is enforced by the `uploads` row, not by the signature.
 */
export function signUploadPath(secret: string, fileId: string, expiresAt: number): string {
  const expires = Math.floor(expiresAt / 1000);
  return `/api/v1/uploads/${encodeURIComponent(fileId)}?expires=${expires}&sig=${uploadMac(secret, fileId, expires)}`;
}

export function verifyUploadSignature(
  secret: string,
  fileId: string,
  expires: string | undefined,
  sig: string | undefined,
  now: number,
): boolean {
  if (!expires || !sig || !/^\d{1,12}$/.test(expires)) return false;
  if (Number(expires) * 1000 < now) return false;
  const expected = Buffer.from(uploadMac(secret, fileId, Number(expires)));
  const given = Buffer.from(sig);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

function uploadMac(secret: string, fileId: string, expires: number): string {
  return createHmac('sha256', secret).update(`upload.${fileId}.${expires}`).digest('base64url');
}
