import { createHash } from 'node:crypto';
import type { BlobInfo } from '../blobs/blob-store.js';

/**
 * The validators of a media object (RFC 9110 section 8.8) and the conditions that compare with
 * them. The ETag is strong: a digest of the object key, its size and its write time, which every
 * API process reads alike from the shared store; a stored object is never changed in place (a
 * replacement has a new write time), so equal tags mean equal bytes. No content hash is stored.
 */
export interface MediaValidators {
  etag: string;
  lastModified: string;
  /** Last-Modified as the second it names, for comparisons with HTTP dates. */
  modifiedSecond: number;
}

export function mediaValidators(key: string, info: BlobInfo): MediaValidators {
  const digest = createHash('sha256').update(`${key}\n${info.size}\n${info.modifiedAt}`).digest('base64url');
  const modifiedSecond = Math.floor(info.modifiedAt / 1000);
  return {
    etag: `"${digest.slice(0, 27)}"`,
    lastModified: new Date(modifiedSecond * 1000).toUTCString(),
    modifiedSecond,
  };
}

/**
 * Whether a GET or HEAD may be answered 304 (RFC 9110 section 13.2.2): If-None-Match when sent
 * (weak comparison; `*` matches any existing object), otherwise If-Modified-Since.
 */
export function notModified(
  validators: MediaValidators,
  ifNoneMatch: string | undefined,
  ifModifiedSince: string | undefined,
): boolean {
  if (ifNoneMatch !== undefined) {
    if (ifNoneMatch.trim() === '*') return true;
    return entityTags(ifNoneMatch).some((tag) => opaque(tag) === opaque(validators.etag));
  }
  if (ifModifiedSince !== undefined) {
    const since = Date.parse(ifModifiedSince);
    return Number.isFinite(since) && validators.modifiedSecond * 1000 <= since;
  }
  return false;
}

/**
 * Whether the Range may be honoured (RFC 9110 section 13.1.5): no If-Range, or one that names the
 * current ETag (strong comparison: a weak tag never matches) or exactly the Last-Modified date.
 */
export function rangeStillApplies(validators: MediaValidators, ifRange: string | undefined): boolean {
  if (ifRange === undefined) return true;
  const value = ifRange.trim();
  if (value.startsWith('"') || value.startsWith('W/')) return value === validators.etag;
  const date = Date.parse(value);
  return Number.isFinite(date) && date === validators.modifiedSecond * 1000;
}

/** The entity tags of a list (`"a", W/"b"`), each as sent. */
function entityTags(list: string): string[] {
  return list.match(/(?:W\/)?"[^"]*"/g) ?? [];
}

/** A tag without its weakness mark, for the weak comparison. */
function opaque(tag: string): string {
  return tag.startsWith('W/') ? tag.slice(2) : tag;
}
