import { createHash } from 'node:crypto';
import type { BlobSource } from '../blobs/blob-source.js';
import { barsPng } from './synthetic/bars-png.js';
import { syntheticVideo, type SyntheticVideoSpec } from './synthetic/synthetic-video.js';

/** Files up to this size are kept once rendered; larger ones are streamed each time. */
const MAX_KEPT_FILE_BYTES = 4 * 1024 * 1024;

/** A rendered file: whole with its SHA-256 (hex) when kept, else a stream. */
export interface Rendered {
  bytes: BlobSource;
  contentId?: string;
}

interface KeptFile {
  bytes: Buffer;
  contentId: string;
}

/**
 * The simulator's rendered files, by everything they depend on, kept up to `maxBytes` in all
 * (the least recently used dropped first). A service runs the same few sizes, rates and lengths
 * over and over: each renders once (a 720p clip costs a few ms of CPU, a 4k PNG about 300 ms),
 * then every task of the same shape gets the same bytes at no cost, with their hash, so that the
 * blob store can keep one copy for all of them (BlobStore.putShared). Memory stays bounded.
 */
export class RenderCache {
  private readonly files = new Map<string, KeptFile>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** The video of `spec`: whole when kept (or small enough to keep), else a stream. */
  video(spec: SyntheticVideoSpec): Rendered {
    const key = `video:${JSON.stringify(spec)}`;
    const kept = this.take(key);
    if (kept) return kept;
    const video = syntheticVideo(spec);
    if (video.size > MAX_KEPT_FILE_BYTES) return { bytes: video.chunks() };
    return this.keep(key, Buffer.concat([...video.pieces()], video.size));
  }

  /** The colour-bars PNG of `width` x `height`: whole when kept, else streamed (and kept once complete, if small). */
  png(width: number, height: number): Rendered {
    const key = `png:${width}x${height}`;
    return this.take(key) ?? { bytes: this.keepWhenDone(key, barsPng(width, height)) };
  }

  private async *keepWhenDone(key: string, chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    const seen: Buffer[] = [];
    let size = 0;
    for await (const chunk of chunks) {
      if (size <= MAX_KEPT_FILE_BYTES) seen.push(chunk);
      size += chunk.length;
      yield chunk;
    }
    if (size <= MAX_KEPT_FILE_BYTES) this.keep(key, Buffer.concat(seen, size));
  }

  private take(key: string): KeptFile | undefined {
    const file = this.files.get(key);
    if (file) {
      // Most recently used last: the Map's order is the eviction order.
      this.files.delete(key);
      this.files.set(key, file);
    }
    return file;
  }

  private keep(key: string, bytes: Buffer): KeptFile {
    const file = { bytes, contentId: createHash('sha256').update(bytes).digest('hex') };
    if (bytes.length > this.maxBytes || this.files.has(key)) return file;
    this.files.set(key, file);
    this.bytes += bytes.length;
    for (const [oldest, old] of this.files) {
      if (this.bytes <= this.maxBytes) break;
      this.files.delete(oldest);
      this.bytes -= old.bytes.length;
    }
    return file;
  }
}
