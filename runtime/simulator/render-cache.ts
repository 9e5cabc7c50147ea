import type { BlobSource } from '../blobs/blob-source.js';
import { barsPng } from './synthetic/bars-png.js';
import { syntheticVideo, type SyntheticVideoSpec } from './synthetic/synthetic-video.js';

/** Files up to this size are kept once rendered; larger ones are streamed each time. */
const MAX_KEPT_FILE_BYTES = 4 * 1024 * 1024;

/**
 * The simulator's rendered files, by everything they depend on, kept up to `maxBytes` in all
 * (the least recently used dropped first). A service runs the same few sizes, rates and lengths
 * over and over: each renders once (a 720p clip costs a few ms of CPU, a 4k PNG about 300 ms),
 * then every task of the same shape gets the same bytes at no cost. Memory stays bounded.
 */
export class RenderCache {
  private readonly files = new Map<string, Buffer>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** The video of `spec`: whole when kept (or small enough to keep), else a stream. */
  video(spec: SyntheticVideoSpec): BlobSource {
    const key = `video:${JSON.stringify(spec)}`;
    const kept = this.take(key);
    if (kept) return kept;
    const video = syntheticVideo(spec);
    if (video.size > MAX_KEPT_FILE_BYTES) return video.chunks();
    const file = Buffer.concat([...video.pieces()], video.size);
    this.keep(key, file);
    return file;
  }

  /** The colour-bars PNG of `width` x `height`: whole when kept, else streamed (and kept once complete, if small). */
  png(width: number, height: number): BlobSource {
    const key = `png:${width}x${height}`;
    return this.take(key) ?? this.keepWhenDone(key, barsPng(width, height));
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

  private take(key: string): Buffer | undefined {
    const file = this.files.get(key);
    if (file) {
      // Most recently used last: the Map's order is the eviction order.
      this.files.delete(key);
      this.files.set(key, file);
    }
    return file;
  }

  private keep(key: string, file: Buffer): void {
    if (file.length > this.maxBytes || this.files.has(key)) return;
    this.files.set(key, file);
    this.bytes += file.length;
    for (const [oldest, old] of this.files) {
      if (this.bytes <= this.maxBytes) break;
      this.files.delete(oldest);
      this.bytes -= old.length;
    }
  }
}
