import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { copyFile, link, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, normalize, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Kysely } from 'kysely';
import type { Database } from '../storage/schema.js';
import { capped, chunksOf, rechunk, type BlobSource } from './blob-source.js';

export { BlobTooLargeError, type BlobSource } from './blob-source.js';

/** Bytes `start` to `end` of an object, both included (as in `Range: bytes=start-end`). */
export interface ByteRange {
  start: number;
  end: number;
}

/** What a media link answers about an object without reading it: its validators come from these. */
export interface BlobInfo {
  /** The whole object's size in bytes. */
  size: number;
  /** When the object was written (milliseconds since the epoch); an object is never changed in place, only replaced. */
  modifiedAt: number;
}

export interface PutOptions {
  /** The most bytes the object may have; past it the write stops with BlobTooLargeError and nothing is kept. */
  maxBytes?: number;
}

/**
 * Where media objects live. The local directory is the embedded default. `put` takes the bytes
 * whole (small buffers) or as a stream, which it writes as it reads: an object appears complete
 * or not at all, and a source that fails (or passes `maxBytes`) leaves nothing behind.
 */
export interface BlobStore {
  /** Stores the object and answers its size in bytes. */
  put(key: string, source: BlobSource, options?: PutOptions): Promise<number>;
  /**
   * Stores `bytes` under `key` as `put` does, where the store can keep one copy of bytes many keys
   * hold (`contentId`: their SHA-256 in hex, known to the caller without reading them, such as the
   * simulator's rendered clips). Each key stays an object of its own: deleting or replacing one
   * leaves the others whole. A store without it takes `put`.
   */
  putShared?(key: string, contentId: string, bytes: Uint8Array): Promise<number>;
  read(key: string): Promise<{ stream: NodeJS.ReadableStream; size: number } | undefined>;
  /**
   * Bytes `start` to `end` (inclusive) of the object, read from the store as a range (never the
   * whole object). `end` past the last byte is clipped to it; `start` at or past the end yields an
   * empty stream. `size` is the whole object's size. Undefined when there is no such object.
   */
  readRange(key: string, range: ByteRange): Promise<{ stream: NodeJS.ReadableStream; size: number } | undefined>;
  /** The object's size and write time, without reading it; undefined when there is no such object. */
  stat(key: string): Promise<BlobInfo | undefined>;
  delete(key: string): Promise<void>;
  /**
   * A new object `to` holding the bytes `from` holds now, answering its size (undefined when there
   * is no `from`). The copy is an object of its own: a later write to `from` leaves it whole. An
   * upload's commit copies the received object to a key its ticket never named (runtime/files/uploads.ts).
   */
  copy(from: string, to: string): Promise<number | undefined>;
  /** Removes what writes cut short by a crash left (never visible as objects), and shared copies no object names, once older than `olderThanMs`; answers how many. */
  sweepAbandoned(olderThanMs: number): Promise<number>;
  /** A store that serves its objects itself (S3): a GET on it valid until `expiresAt` and no later. */
  presignGet?(key: string, expiresAt: number, now: number, contentType?: string): Promise<string>;
  /** ... and takes uploads itself: a PUT of exactly `size` bytes of `contentType`, valid until `expiresAt`. */
  presignPut?(
    key: string,
    object: { size: number; contentType: string },
    expiresAt: number,
    now: number,
  ): Promise<string>;
  /** Checked by `serve` before it starts: throws one line naming what is wrong when the store cannot be written. */
  checkWritable?(): Promise<void>;
  /** Every object's key and size, in no set order (`mediaforge blobs copy`); writes in progress are not objects. */
  list(): AsyncIterable<{ key: string; size: number }>;
  /** Lets go of connections the store keeps (the service's close). */
  close?(): void;
}

const OWNER_ONLY_FILE = 0o600;
const OWNER_ONLY_FOLDER = 0o700;
/**
 * File reads of a range, at most this many bytes each (never more than the range): a player's 1 MiB
 * range in 4 reads rather than 16 of the default 64 KiB, each a threadpool round trip and a socket
 * write; about 10 % less CPU per answer (bench/media-ranges.ts, bench/runs/2026-11-26.md). 1 MiB
 * reads cost more than 64 KiB ones, so not larger.
 */
const RANGE_READ_BYTES = 256 * 1024;

export class LocalBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  private path(key: string): string {
    const path = normalize(join(this.root, key));
    if (!path.startsWith(normalize(this.root) + sep)) throw new Error('blob key escapes the store');
    return path;
  }

  /** Temporary files of writes in progress, on the store's own file system (so the final rename is atomic). */
  private get partial(): string {
    return join(this.root, '.partial');
  }

  /** The one copy of shared bytes, by content id; never an object (not listed, not read by key). */
  private shared(contentId: string): string {
    if (!/^[0-9a-f]{64}$/.test(contentId)) throw new Error('a content id is a SHA-256 in hex');
    return join(this.root, '.shared', contentId);
  }

  /**
   * Written to a temporary file under `.partial/`, renamed over the object once complete. Objects
   * are their owner's only, as the database file is (outputs and uploads are customers' media):
   * files 0600, the folders this creates 0700.
   */
  async put(key: string, source: BlobSource, options: PutOptions = {}): Promise<number> {
    const path = this.path(key);
    await mkdir(dirname(path), { recursive: true, mode: OWNER_ONLY_FOLDER });
    let size = 0;
    await this.replace(path, (temporary) =>
      pipeline(
        Readable.from(capped(chunksOf(source), options.maxBytes, (n) => (size = n))),
        createWriteStream(temporary, { flags: 'wx', mode: OWNER_ONLY_FILE }),
      ),
    );
    return size;
  }

  /**
   * Puts a file at `path` in one step: `write` makes it under a fresh name in `.partial/`, which is
   * then renamed over `path`, so a reader sees the old file or the whole new one; on any failure
   * the temporary name is removed and the error thrown.
   */
  private async replace(path: string, write: (temporary: string) => Promise<unknown>): Promise<void> {
    await mkdir(this.partial, { recursive: true, mode: OWNER_ONLY_FOLDER });
    const temporary = join(this.partial, randomBytes(12).toString('hex'));
    try {
      await write(temporary);
      await rename(temporary, path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  /**
   * A hard link to the one copy under `.shared/` (written first when missing): a task's object is
   * a name for the same file, so storing it writes no bytes, and deleting it (a purge) unlinks that
   * name only. Where links are refused (a file system without them, or a copy at its file system's
   * link limit), the copy is written anew or the object written whole, as `put` does.
   */
  async putShared(key: string, contentId: string, bytes: Uint8Array): Promise<number> {
    const path = this.path(key);
    const shared = this.shared(contentId);
    await mkdir(dirname(path), { recursive: true, mode: OWNER_ONLY_FOLDER });
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await link(shared, path);
        return bytes.byteLength;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EEXIST') {
          // The key is taken (a second poll of the same job): a new name replaces it in one rename, as put does.
          await this.replace(path, (temporary) => link(shared, temporary));
          return bytes.byteLength;
        }
        // No copy yet (or swept), or this copy has as many names as the file system allows: a fresh copy, renamed over.
        if (code === 'ENOENT' || code === 'EMLINK') await this.put(`.shared/${contentId}`, bytes);
        else break;
      }
    }
    return this.put(key, bytes);
  }

  /**
   * Opens the file before anything else: a purge that deletes it a moment later cannot cut the
   * stream short or turn the answer into an error (the open handle keeps the bytes readable).
   */
  async read(key: string) {
    const opened = await this.openFile(key);
    if (!opened) return undefined;
    return { stream: opened.handle.createReadStream(), size: opened.size };
  }

  /** The same open-first read, of the file's bytes `start` to `end` only. */
  async readRange(key: string, range: ByteRange) {
    const opened = await this.openFile(key);
    if (!opened) return undefined;
    const { handle, size } = opened;
    const end = Math.min(range.end, size - 1);
    if (range.start > end) {
      await handle.close();
      return { stream: Readable.from([]), size };
    }
    const highWaterMark = Math.min(RANGE_READ_BYTES, end - range.start + 1);
    return { stream: handle.createReadStream({ start: range.start, end, highWaterMark }), size };
  }

  async stat(key: string): Promise<BlobInfo | undefined> {
    const info = await stat(this.path(key)).catch(() => undefined);
    if (!info?.isFile()) return undefined;
    return { size: info.size, modifiedAt: Math.floor(info.mtimeMs) };
  }

  private async openFile(key: string) {
    const handle = await open(this.path(key), 'r').catch(() => undefined);
    if (!handle) return undefined;
    const info = await handle.stat().catch(() => undefined);
    if (!info?.isFile()) {
      await handle.close();
      return undefined;
    }
    return { handle, size: info.size };
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  /** A copy of the file's bytes (not a second name for them), written under `.partial/` and renamed into place as `put` does. */
  async copy(from: string, to: string): Promise<number | undefined> {
    const source = this.path(from);
    const path = this.path(to);
    await mkdir(dirname(path), { recursive: true, mode: OWNER_ONLY_FOLDER });
    try {
      await this.replace(path, (temporary) => copyFile(source, temporary, 0));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    return (await this.stat(to))?.size;
  }

  async *list(): AsyncGenerator<{ key: string; size: number }> {
    const walk = async function* (root: string, folder: string): AsyncGenerator<{ key: string; size: number }> {
      const entries = await readdir(join(root, folder), { withFileTypes: true }).catch(() => []);
      for (const entry of entries) {
        const key = folder ? `${folder}/${entry.name}` : entry.name;
        if (entry.isDirectory()) {
          if (key !== '.partial' && key !== '.shared') yield* walk(root, key);
        } else if (entry.isFile()) {
          const info = await stat(join(root, key)).catch(() => undefined);
          if (info) yield { key, size: info.size };
        }
      }
    };
    yield* walk(this.root, '');
  }

  /**
   * Also the shared copies no object names any more (a link count of 1: the copy's own name); a
   * write that links one a moment later finds it gone and writes it anew.
   */
  async sweepAbandoned(olderThanMs: number): Promise<number> {
    let removed = 0;
    for (const [folder, abandoned] of [
      [this.partial, () => true],
      [join(this.root, '.shared'), (info: { nlink: number }) => info.nlink === 1],
    ] as const) {
      const names = await readdir(folder).catch(() => [] as string[]);
      for (const name of names) {
        const path = join(folder, name);
        const info = await stat(path).catch(() => undefined);
        if (info && info.mtimeMs < Date.now() - olderThanMs && abandoned(info)) {
          await rm(path, { force: true });
          removed++;
        }
      }
    }
    return removed;
  }
}

/** Signed, expiring links to media objects: HMAC over the key and the expiry. */
export function signMediaPath(secret: string, key: string, expiresAt: number): string {
  const expires = Math.floor(expiresAt / 1000);
  return `/api/v1/media/${encodeURIComponent(key)}?expires=${expires}&sig=${mediaMac(secret, key, expires)}`;
}

/** A link is good, or expired (its signature holds: the caller may fetch a fresh one), or not valid (altered, forged, another key). */
export type MediaLinkCheck = 'valid' | 'expired' | 'invalid';

export function verifyMediaLink(
  secret: string,
  key: string,
  expires: string | undefined,
  sig: string | undefined,
  now: number,
): MediaLinkCheck {
  if (!expires || !sig || !/^\d{1,12}$/.test(expires)) return 'invalid';
  const expected = Buffer.from(mediaMac(secret, key, Number(expires)));
  const given = Buffer.from(sig);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return 'invalid';
  return Number(expires) * 1000 < now ? 'expired' : 'valid';
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

  /**
   * The bytes go to `blob_chunks` under a fresh set id, one row of about 1 MiB at a time; then one
   * transaction points the object's row at the set and drops the set it replaces. A failed or
   * refused write deletes its rows; until the switch no reader can reach them.
   */
  async put(key: string, source: BlobSource, options: PutOptions = {}): Promise<number> {
    // The set id starts with its write's time (base 36), so abandoned sets can be told by age.
    const set = `${this.now().toString(36)}-${randomBytes(9).toString('base64url')}`;
    let size = 0;
    let seq = 0;
    try {
      for await (const chunk of rechunk(
        capped(chunksOf(source), options.maxBytes, (n) => (size = n)),
        CHUNK_BYTES,
      )) {
        await this.db.insertInto('blob_chunks').values({ chunk_set: set, seq: seq++, bytes: chunk }).execute();
      }
      await this.pointAt(key, set, size);
    } catch (error) {
      await this.db.deleteFrom('blob_chunks').where('chunk_set', '=', set).execute();
      throw error;
    }
    return size;
  }

  /** A stream that reads one chunk row at a time, never the whole object. */
  async read(key: string) {
    return this.readRange(key, { start: 0, end: Number.MAX_SAFE_INTEGER });
  }

  /**
   * Reads only the chunk rows the range touches: every chunk but the last holds CHUNK_BYTES, so
   * the first row is `start / CHUNK_BYTES`, and the stream stops after the row holding `end`.
   */
  async readRange(key: string, range: ByteRange) {
    const row = await this.db
      .selectFrom('blobs')
      .select(['chunk_set', 'size'])
      .where('key', '=', key)
      .executeTakeFirst();
    if (!row) return undefined;
    const db = this.db;
    const set = row.chunk_set;
    const size = Number(row.size);
    const start = range.start;
    const end = Math.min(range.end, size - 1);
    async function* chunks(): AsyncGenerator<Buffer> {
      if (start > end) return;
      if (set === null) {
        // Written before chunks existed: the bytes are in the row itself.
        const legacy = await db.selectFrom('blobs').select('bytes').where('key', '=', key).executeTakeFirst();
        if (legacy) yield Buffer.from(legacy.bytes).subarray(start, end + 1);
        return;
      }
      const first = Math.floor(start / CHUNK_BYTES);
      const last = Math.floor(end / CHUNK_BYTES);
      let sent = 0;
      for (let seq = first; seq <= last; seq++) {
        const chunk = await db
          .selectFrom('blob_chunks')
          .select('bytes')
          .where('chunk_set', '=', set)
          .where('seq', '=', seq)
          .executeTakeFirst();
        if (!chunk) break;
        // Every chunk but the last is whole, or the offsets below would point at the wrong bytes.
        if (seq < last && chunk.bytes.byteLength !== CHUNK_BYTES)
          throw new Error(`blob ${key} has a short chunk ${seq}`);
        const offset = seq * CHUNK_BYTES;
        const bytes = Buffer.from(chunk.bytes).subarray(
          Math.max(0, start - offset),
          Math.min(chunk.bytes.byteLength, end + 1 - offset),
        );
        sent += bytes.byteLength;
        yield bytes;
      }
      // Replaced or deleted while being read: fail the stream rather than end it short.
      if (sent !== end - start + 1) throw new Error(`blob ${key} changed while it was read`);
    }
    return { stream: Readable.from(chunks(), { objectMode: false }), size };
  }

  async stat(key: string): Promise<BlobInfo | undefined> {
    const row = await this.db
      .selectFrom('blobs')
      .select(['size', 'created_at'])
      .where('key', '=', key)
      .executeTakeFirst();
    return row ? { size: Number(row.size), modifiedAt: Number(row.created_at) } : undefined;
  }

  /** The chunk rows copied to a fresh set inside the database (no bytes through the service), then switched to as `put` does. */
  /**
   * Points the key at a complete chunk set, in one transaction: the key's row (new or replaced)
   * names the set and its size, and the set it named before is deleted. Readers see the old bytes
   * or the new ones, never a mix.
   */
  private async pointAt(key: string, set: string, size: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const previous = await trx.selectFrom('blobs').select('chunk_set').where('key', '=', key).executeTakeFirst();
      const row = { key, bytes: Buffer.alloc(0), size, created_at: this.now(), chunk_set: set };
      await trx
        .insertInto('blobs')
        .values(row)
        .onConflict((c) =>
          c.column('key').doUpdateSet({ bytes: row.bytes, size, created_at: row.created_at, chunk_set: set }),
        )
        .execute();
      if (previous?.chunk_set)
        await trx.deleteFrom('blob_chunks').where('chunk_set', '=', previous.chunk_set).execute();
    });
  }

  async copy(from: string, to: string): Promise<number | undefined> {
    const source = await this.db
      .selectFrom('blobs')
      .select(['chunk_set', 'size'])
      .where('key', '=', from)
      .executeTakeFirst();
    if (!source) return undefined;
    // A legacy object (bytes in its row) or one replaced meanwhile: read and written as a put.
    if (source.chunk_set === null) {
      const read = await this.read(from);
      return read ? this.put(to, read.stream as AsyncIterable<Buffer>) : undefined;
    }
    const set = `${this.now().toString(36)}-${randomBytes(9).toString('base64url')}`;
    try {
      const copied = await this.db
        .insertInto('blob_chunks')
        .columns(['chunk_set', 'seq', 'bytes'])
        .expression((eb) =>
          eb
            .selectFrom('blob_chunks')
            .select([eb.val(set).as('chunk_set'), 'seq', 'bytes'])
            .where('chunk_set', '=', source.chunk_set!),
        )
        .executeTakeFirst();
      const size = Number(source.size);
      const expected = Math.ceil(size / CHUNK_BYTES);
      // The source was replaced between the two reads (its set deleted): nothing to copy from.
      if (Number(copied.numInsertedOrUpdatedRows ?? 0) !== expected) {
        await this.db.deleteFrom('blob_chunks').where('chunk_set', '=', set).execute();
        return undefined;
      }
      await this.pointAt(to, set, size);
      return size;
    } catch (error) {
      await this.db.deleteFrom('blob_chunks').where('chunk_set', '=', set).execute();
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('blobs').select('chunk_set').where('key', '=', key).executeTakeFirst();
      await trx.deleteFrom('blobs').where('key', '=', key).execute();
      if (row?.chunk_set) await trx.deleteFrom('blob_chunks').where('chunk_set', '=', row.chunk_set).execute();
    });
  }

  async *list(): AsyncGenerator<{ key: string; size: number }> {
    let after = '';
    for (;;) {
      const page = await this.db
        .selectFrom('blobs')
        .select(['key', 'size'])
        .where('key', '>', after)
        .orderBy('key')
        .limit(500)
        .execute();
      for (const row of page) yield { key: row.key, size: Number(row.size) };
      if (page.length < 500) return;
      after = page[page.length - 1].key;
    }
  }

  /** Chunk sets no object points at, written more than `olderThanMs` ago (a writer that died before its switch). */
  async sweepAbandoned(olderThanMs: number): Promise<number> {
    const sets = await this.db
      .selectFrom('blob_chunks as c')
      .select('c.chunk_set')
      .where('c.seq', '=', 0)
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('blobs as b').select('b.key').whereRef('b.chunk_set', '=', 'c.chunk_set'))),
      )
      .execute();
    const cutoff = this.now() - olderThanMs;
    let removed = 0;
    for (const { chunk_set: set } of sets) {
      const writtenAt = parseInt(set.split('-')[0], 36);
      if (!(writtenAt < cutoff)) continue;
      await this.db.deleteFrom('blob_chunks').where('chunk_set', '=', set).execute();
      removed++;
    }
    return removed;
  }
}

/** Rows of `blob_chunks`: large enough to keep the row count low, small enough to stay cheap in memory. */
const CHUNK_BYTES = 1024 * 1024;
