/**
 * Writes a bit string most significant bit first, as H.264 and AAC syntax is written: fixed-width
 * fields (`u`), Exp-Golomb codes (`ue`, `se`) and the RBSP trailing bits. Bits collect in a small
 * accumulator and whole bytes go to a growing buffer (a 4k picture is a few hundred KiB).
 */
export class BitWriter {
  private buffer = Buffer.alloc(1024);
  private length = 0;
  /** Bits not yet written out: `pending` holds `used` (< 8) of them, right-aligned. */
  private pending = 0;
  private used = 0;

  /** `value` in `bits` bits (up to 32). */
  u(bits: number, value: number): this {
    if (bits > 24) return this.u(bits - 24, Math.floor(value / 0x100_0000)).u(24, value % 0x100_0000);
    // At most 7 pending bits + 24 new ones: below 2^31, so the shifts stay exact.
    this.pending = (this.pending << bits) | (value & ((1 << bits) - 1));
    this.used += bits;
    while (this.used >= 8) {
      this.used -= 8;
      this.byte((this.pending >>> this.used) & 0xff);
    }
    this.pending &= (1 << this.used) - 1;
    return this;
  }

  /** Unsigned Exp-Golomb: leading zeros, then value + 1 in binary. */
  ue(value: number): this {
    const code = value + 1;
    const length = 32 - Math.clz32(code);
    return this.u(length - 1, 0).u(length, code);
  }

  /** Signed Exp-Golomb: 1 -> 1, -1 -> 2, 2 -> 3 ... */
  se(value: number): this {
    return this.ue(value > 0 ? 2 * value - 1 : -2 * value);
  }

  /** Whole bytes as they are (the writer must be byte-aligned). */
  raw(data: Uint8Array): this {
    if (this.used !== 0) throw new Error('raw bytes need byte alignment');
    this.reserve(data.length);
    this.buffer.set(data, this.length);
    this.length += data.length;
    return this;
  }

  /** Zero bits up to the next byte boundary. */
  alignZero(): this {
    return this.used === 0 ? this : this.u(8 - this.used, 0);
  }

  /** rbsp_trailing_bits: a one, then zeros to the byte boundary. */
  trailing(): this {
    return this.u(1, 1).alignZero();
  }

  /** The bytes written (the writer must be byte-aligned). */
  finish(): Buffer {
    if (this.used !== 0) throw new Error('unaligned bit string');
    return Buffer.from(this.buffer.subarray(0, this.length));
  }

  private byte(value: number): void {
    this.reserve(1);
    this.buffer[this.length++] = value;
  }

  private reserve(more: number): void {
    if (this.length + more <= this.buffer.length) return;
    const grown = Buffer.alloc(Math.max(this.buffer.length * 2, this.length + more));
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }
}
