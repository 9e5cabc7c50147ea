/**
 * Reads a stream of chunks by byte counts (exactly n bytes, or skip n) without holding more than
 * what was asked for: the box scanner of MP4 files and the head of a stream use it.
 */
export class ByteReader {
  private pending: Buffer[] = [];
  private held = 0;
  private ended = false;

  constructor(private readonly chunks: AsyncIterator<Buffer>) {}

  /** Up to `n` bytes (fewer only at the end of the stream). */
  async read(n: number): Promise<Buffer> {
    while (this.held < n && (await this.fill()));
    const all = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.held);
    const out = all.subarray(0, n);
    const rest = all.subarray(out.length);
    this.pending = rest.length ? [rest] : [];
    this.held = rest.length;
    return out;
  }

  /** Drops `n` bytes; false when the stream ended first. */
  async skip(n: number): Promise<boolean> {
    while (n > 0) {
      if (this.held === 0 && !(await this.fill())) return false;
      const first = this.pending[0];
      const take = Math.min(n, first.length);
      if (take === first.length) this.pending.shift();
      else this.pending[0] = first.subarray(take);
      this.held -= take;
      n -= take;
    }
    return true;
  }

  private async fill(): Promise<boolean> {
    if (this.ended) return false;
    const next = await this.chunks.next();
    if (next.done) {
      this.ended = true;
      return false;
    }
    if (next.value.length) {
      this.pending.push(next.value);
      this.held += next.value.length;
    }
    return true;
  }
}

/**
 * The first bytes of a stream, as many as `want(prefix)` asks for (asked again as bytes come, with
 * the first 64 of them at most, so a format can read its own length field first), and the whole
 * stream again from its start as `rest`: the head, then the chunks not read yet.
 */
export async function peek(
  chunks: AsyncIterable<Buffer>,
  want: (prefix: Buffer) => number,
): Promise<{ head: Buffer; rest: AsyncIterable<Buffer>; close(): Promise<void> }> {
  const iterator = chunks[Symbol.asyncIterator]();
  let parts: Buffer[] = [];
  let held = 0;
  let ended = false;
  const prefix = () =>
    parts.length === 0
      ? Buffer.alloc(0)
      : parts[0].length >= 64
        ? parts[0].subarray(0, 64)
        : Buffer.concat(parts, held).subarray(0, 64);
  while (!ended && held < want(prefix())) {
    const next = await iterator.next();
    if (next.done) ended = true;
    else {
      parts.push(next.value);
      held += next.value.length;
      if (parts[0].length < 64) parts = [Buffer.concat(parts, held)];
    }
  }
  const head = parts.length === 1 ? parts[0] : Buffer.concat(parts, held);
  parts = [];
  async function* rest(): AsyncGenerator<Buffer> {
    if (head.length) yield head;
    if (ended) return;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield next.value;
    }
  }
  return { head, rest: rest(), close: async () => void (await iterator.return?.()) };
}
