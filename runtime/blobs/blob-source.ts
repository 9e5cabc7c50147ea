/** What a blob store takes: a whole buffer (small objects) or a stream of chunks. */
export type BlobSource = Uint8Array | AsyncIterable<Uint8Array | string> | NodeJS.ReadableStream;

/** A source that passed the `maxBytes` of its write; the store keeps nothing of it. */
export class BlobTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`more than ${maxBytes} bytes`);
    this.name = 'BlobTooLargeError';
  }
}

/** The chunks of a source, as Buffers, in order. */
export async function* chunksOf(source: BlobSource): AsyncGenerator<Buffer> {
  if (source instanceof Uint8Array) {
    yield Buffer.from(source.buffer, source.byteOffset, source.byteLength);
    return;
  }
  for await (const chunk of source as AsyncIterable<Uint8Array | string>) {
    yield typeof chunk === 'string'
      ? Buffer.from(chunk)
      : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  }
}

/** Passes the chunks through, counting; throws BlobTooLargeError once more than `max` bytes came. */
export async function* capped(
  chunks: AsyncIterable<Buffer>,
  max: number | undefined,
  count: (total: number) => void,
): AsyncGenerator<Buffer> {
  let total = 0;
  for await (const chunk of chunks) {
    total += chunk.length;
    if (max !== undefined && total > max) throw new BlobTooLargeError(max);
    count(total);
    yield chunk;
  }
  count(total);
}

/** Regroups chunks into pieces of `size` bytes (the last one shorter), holding at most one piece. */
export async function* rechunk(chunks: AsyncIterable<Buffer>, size: number): AsyncGenerator<Buffer> {
  let parts: Buffer[] = [];
  let held = 0;
  for await (let chunk of chunks) {
    while (held + chunk.length >= size) {
      const take = size - held;
      parts.push(chunk.subarray(0, take));
      yield Buffer.concat(parts, size);
      chunk = chunk.subarray(take);
      parts = [];
      held = 0;
    }
    if (chunk.length) {
      parts.push(chunk);
      held += chunk.length;
    }
  }
  if (held) yield Buffer.concat(parts, held);
}
