/**
 * Boxes of the ISO base media file format (ISO/IEC 14496-12), which MP4 and QuickTime share: just
 * what a file with one chunk per track needs (ftyp, moov with its tracks, the mdat header).
 */

/** A box: 32-bit size, four-character type, payload. */
export function box(type: string, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + body.length, 0);
  header.write(type, 4, 'latin1');
  return Buffer.concat([header, body]);
}

/** A full box: a box whose payload opens with a version byte and 24 bits of flags. */
export function fullBox(type: string, version: number, flags: number, ...payload: Buffer[]): Buffer {
  return box(type, u32((version << 24) | flags), ...payload);
}

export function u8(value: number): Buffer {
  return Buffer.from([value]);
}

export function u16(value: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(value);
  return b;
}

export function u32(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(value >>> 0);
  return b;
}

/** Many 32-bit values in one buffer (a sample size table can have tens of thousands). */
function u32s(values: number[]): Buffer {
  const b = Buffer.alloc(4 * values.length);
  values.forEach((v, i) => b.writeUInt32BE(v, 4 * i));
  return b;
}

/** The file type box: the first brand is the major brand, all are listed as compatible. */
export function fileTypeBox(brands: string[]): Buffer {
  return box('ftyp', Buffer.from(brands[0], 'latin1'), u32(0), ...brands.map((b) => Buffer.from(b, 'latin1')));
}

/** The media data box's header for `size` bytes of samples (which follow it). */
export function mediaDataHeader(size: number): Buffer {
  if (8 + size > 0xffff_ffff) throw new Error('media data over 4 GiB');
  return Buffer.concat([u32(8 + size), Buffer.from('mdat', 'latin1')]);
}

/** One track with its samples in a single chunk. */
export interface TrackLayout {
  kind: 'video' | 'audio';
  id: number;
  /** Media time units per second, and the track's length in them. */
  timescale: number;
  duration: number;
  /** The sample description (avc1, mp4a ...). */
  sampleEntry: Buffer;
  /** Sample sizes in bytes, or one size for all. */
  sizes: number[] | { each: number; count: number };
  /** Runs of [sample count, sample duration]. */
  timeToSample: [number, number][];
  /** 1-based numbers of the sync samples (video); absent: every sample is one. */
  syncSamples?: number[];
  /** Where the track's chunk starts, from the start of the file. */
  chunkOffset: number;
  /** Display size (video). */
  width?: number;
  height?: number;
}

/** A 3x3 identity transform (16.16 and 2.30 fixed point), as mvhd and tkhd carry it. */
const MATRIX = Buffer.concat([0x0001_0000, 0, 0, 0, 0x0001_0000, 0, 0, 0, 0x4000_0000].map(u32));
/** ISO-639-2/T `und`, packed in three 5-bit letters. */
const UNDETERMINED = 0x55c4;

/** The movie box; `timescale` is the movie's (durations of tkhd and mvhd are in it). */
export function movieBox(tracks: TrackLayout[], timescale: number): Buffer {
  const movieDurationOf = (t: TrackLayout) => Math.round((t.duration * timescale) / t.timescale);
  const duration = Math.max(...tracks.map(movieDurationOf));
  const mvhd = fullBox(
    'mvhd',
    0,
    0,
    u32(0),
    u32(0),
    u32(timescale),
    u32(duration),
    u32(0x0001_0000),
    u16(0x0100),
    Buffer.alloc(10),
    MATRIX,
    Buffer.alloc(24),
    u32(Math.max(...tracks.map((t) => t.id)) + 1),
  );
  return box('moov', mvhd, ...tracks.map((t) => trackBox(t, movieDurationOf(t))));
}

function trackBox(t: TrackLayout, movieDuration: number): Buffer {
  const video = t.kind === 'video';
  const tkhd = fullBox(
    'tkhd',
    0,
    0x3,
    u32(0),
    u32(0),
    u32(t.id),
    u32(0),
    u32(movieDuration),
    Buffer.alloc(8),
    u16(0),
    u16(0),
    u16(video ? 0 : 0x0100),
    u16(0),
    MATRIX,
    u32((t.width ?? 0) * 0x1_0000),
    u32((t.height ?? 0) * 0x1_0000),
  );
  const mdhd = fullBox('mdhd', 0, 0, u32(0), u32(0), u32(t.timescale), u32(t.duration), u16(UNDETERMINED), u16(0));
  const name = video ? 'VideoHandler' : 'SoundHandler';
  const hdlr = fullBox(
    'hdlr',
    0,
    0,
    u32(0),
    Buffer.from(video ? 'vide' : 'soun', 'latin1'),
    Buffer.alloc(12),
    Buffer.from(`${name}\0`, 'latin1'),
  );
  const header = video ? fullBox('vmhd', 0, 1, Buffer.alloc(8)) : fullBox('smhd', 0, 0, Buffer.alloc(4));
  const dinf = box('dinf', fullBox('dref', 0, 0, u32(1), fullBox('url ', 0, 1)));
  return box('trak', tkhd, box('mdia', mdhd, hdlr, box('minf', header, dinf, sampleTable(t))));
}

function sampleTable(t: TrackLayout): Buffer {
  const count = Array.isArray(t.sizes) ? t.sizes.length : t.sizes.count;
  const stsd = fullBox('stsd', 0, 0, u32(1), t.sampleEntry);
  const stts = fullBox(
    'stts',
    0,
    0,
    u32(t.timeToSample.length),
    ...t.timeToSample.flatMap(([n, delta]) => [u32(n), u32(delta)]),
  );
  const stss = t.syncSamples ? [fullBox('stss', 0, 0, u32(t.syncSamples.length), ...t.syncSamples.map(u32))] : [];
  const stsc = fullBox('stsc', 0, 0, u32(1), u32(1), u32(count), u32(1));
  const stsz = Array.isArray(t.sizes)
    ? fullBox('stsz', 0, 0, u32(0), u32(count), u32s(t.sizes))
    : fullBox('stsz', 0, 0, u32(t.sizes.each), u32(count));
  const stco = fullBox('stco', 0, 0, u32(1), u32(t.chunkOffset));
  return box('stbl', stsd, stts, ...stss, stsc, stsz, stco);
}

/** An MPEG-4 descriptor (ISO/IEC 14496-1): tag, length (one byte below 128), payload. */
export function descriptor(tag: number, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  if (body.length > 127) throw new Error('descriptor too long for a one-byte length');
  return Buffer.concat([u8(tag), u8(body.length), body]);
}
