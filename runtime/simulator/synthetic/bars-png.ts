import { Readable } from 'node:stream';
import { createDeflate, crc32 } from 'node:zlib';
import { ColourBars } from './colour-bars.js';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const FILTER_NONE = 0;
/** Each byte minus the byte above: a row like the one above is all zeros, which deflate shrinks to almost nothing. */
const FILTER_UP = 2;

/**
 * The picture of a simulated clip (the same colour bars, on the same macroblock grid) as an RGB
 * PNG of `width` x `height`: the image a clip's last frame is returned as. Rows are compressed as
 * they are made (node:zlib), each piece of compressed data its own IDAT chunk, so a 4k frame is
 * never held uncompressed.
 */
export async function* barsPng(width: number, height: number): AsyncGenerator<Buffer> {
  const bars = new ColourBars(Math.ceil(width / 16), Math.ceil(height / 16));
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits per sample, RGB, deflate, adaptive filtering, no interlace
  yield Buffer.concat([SIGNATURE, chunk('IHDR', header)]);

  const unchanged = Buffer.alloc(1 + 3 * width); // filter Up, then zeros
  unchanged[0] = FILTER_UP;
  function* rows() {
    for (let y = 0; y < height; y++) {
      const startsRow = y % 16 === 0 && (y === 0 || bars.isBandStart(y / 16));
      yield startsRow ? rowOf(bars, width, y / 16) : unchanged;
    }
  }
  // pipe() keeps to the pace of this generator's reader: a row is made when deflate wants more.
  const compressed = Readable.from(rows()).pipe(createDeflate({ level: 6 }));
  for await (const data of compressed) yield chunk('IDAT', data as Buffer);
  yield chunk('IEND', Buffer.alloc(0));
}

/** One row of pixels of macroblock row `mbRow`, unfiltered. */
function rowOf(bars: ColourBars, width: number, mbRow: number): Buffer {
  const row = Buffer.alloc(1 + 3 * width);
  row[0] = FILTER_NONE;
  for (let x = 0; x < width; x++) row.set(bars.colourAt(Math.floor(x / 16), mbRow), 1 + 3 * x);
  return row;
}

/** A PNG chunk: length, type, data, CRC-32 of type and data. */
function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}
