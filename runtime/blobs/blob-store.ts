import { createHmac, timingSafeEqual } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, normalize, sep } from 'node:path';
import { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Database } from '../storage/schema.js';

/** Where media objects live. The local directory is the embedded default. */
export interface BlobStore {
  put(key: string, bytes: Uint8Array): Promise<void>;
  read(key: string): Promise<{ stream: NodeJS.ReadableStream; size: number } | undefined>;
  delete(key: string): Promise<void>;
}

export class LocalBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  private path(key: string): string {
    const path = normalize(join(this.root, key));
    if (!path.startsWith(normalize(this.root) + sep)) throw new Error('blob key escapes the store');
    return path;
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    const path = this.path(key);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, bytes);
  }

  async read(key: string) {
    const path = this.path(key);
    const info = await stat(path).catch(() => undefined);
    if (!info?.isFile()) return undefined;
    return { stream: createReadStream(path), size: info.size };
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }
}

/** Signed, expiring links to media objects: HMAC over the key and the expiry. */
export function signMediaPath(secret: string, key: string, expiresAt: number): string {
  const expires = Math.floor(expiresAt / 1000);
  return `/api/v1/media/${encodeURIComponent(key)}?expires=${expires}&sig=${mediaMac(secret, key, expires)}`;
}

export function verifyMediaLink(secret: string, key: string, expires: string | undefined, sig: string | undefined, now: number): boolean {
  if (!expires || !sig || !/^\d{1,12}$/.test(expires)) return false;
  if (Number(expires) * 1000 < now) return false;
  const expected = Buffer.from(mediaMac(secret, key, Number(expires)));
  const given = Buffer.from(sig);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

function mediaMac(secret: string, key: string, expires: number): string {
  return createHmac('sha256', secret).update(`media.${key}.${expires}`).digest('base64url');
}

/**
 * Media objects in the service's database, so that every API and worker machine reads what any of
 * them wrote. Fits the embedded default and moderate volumes; an object-store driver (S3 and the
 * like) fits the same interface for large ones.
 */
export class DatabaseBlobStore implements BlobStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => number,
  ) {}

  async put(key: string, bytes: Uint8Array): Promise<void> {
    const row = { key, bytes: Buffer.from(bytes), size: bytes.byteLength, created_at: this.now() };
    await this.db
      .insertInto('blobs')
      .values(row)
      .onConflict((c) => c.column('key').doUpdateSet({ bytes: row.bytes, size: row.size, created_at: row.created_at }))
      .execute();
  }

  async read(key: string) {
    const row = await this.db.selectFrom('blobs').select(['bytes', 'size']).where('key', '=', key).executeTakeFirst();
    if (!row) return undefined;
    return { stream: Readable.from([Buffer.from(row.bytes)]), size: Number(row.size) };
  }

  async delete(key: string): Promise<void> {
    await this.db.deleteFrom('blobs').where('key', '=', key).execute();
  }
}
