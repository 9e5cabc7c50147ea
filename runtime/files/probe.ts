import { Readable } from 'node:stream';
// The parsers (file-type, image-size, mp4box, music-metadata: some hundred modules) load at their
// first use below, not with this module: every process imports it for its small helpers, and a
// command or an API server that never probes a file should not pay for them at start.
import type { Movie, MP4BoxBuffer } from 'mp4box';
import type { BlobStore } from '../blobs/blob-store.js';
import { ByteReader, peek } from './byte-reader.js';
import { hasTransparency } from './transparency.js';

export type AssetKind = 'image' | 'video' | 'audio' | 'lora' | 'document';
export const ASSET_KINDS: readonly AssetKind[] = ['image', 'video', 'audio', 'lora', 'document'];

/** What the bytes of a file are, found from the bytes alone (never from the name or a declared type). */
export interface Probed {
  kind: AssetKind;
  mime: string;
  /** Short format name, in the vocabulary of the models' reference limits (png, jpeg, mp4, mov, wav, mp3 ...). */
  format: string;
  width?: number;
  height?: number;
  hasAlpha?: boolean;
  durationSeconds?: number;
  fps?: number;
}

/** file-type's extension -> kind and format name. */
const DETECTED: Record<string, { kind: AssetKind; format: string }> = {
  png: { kind: 'image', format: 'png' },
  jpg: { kind: 'image', format: 'jpeg' },
  webp: { kind: 'image', format: 'webp' },
  bmp: { kind: 'image', format: 'bmp' },
  gif: { kind: 'image', format: 'gif' },
  mp4: { kind: 'video', format: 'mp4' },
  m4v: { kind: 'video', format: 'mp4' },
  mov: { kind: 'video', format: 'mov' },
  webm: { kind: 'video', format: 'webm' },
  wav: { kind: 'audio', format: 'wav' },
  mp3: { kind: 'audio', format: 'mp3' },
  aac: { kind: 'audio', format: 'aac' },
  m4a: { kind: 'audio', format: 'm4a' },
  flac: { kind: 'audio', format: 'flac' },
  ogg: { kind: 'audio', format: 'ogg' },
  oga: { kind: 'audio', format: 'ogg' },
  opus: { kind: 'audio', format: 'ogg' },
  pdf: { kind: 'document', format: 'pdf' },
  docx: { kind: 'document', format: 'docx' },
};

/** Declared media types an upload ticket accepts, by the kind they announce. */
const DECLARED: Record<string, AssetKind> = {
  'image/png': 'image',
  'image/jpeg': 'image',
  'image/jpg': 'image',
  'image/webp': 'image',
  'image/bmp': 'image',
  'image/x-ms-bmp': 'image',
  'image/gif': 'image',
  'video/mp4': 'video',
  'video/quicktime': 'video',
  'video/webm': 'video',
  'audio/wav': 'audio',
  'audio/x-wav': 'audio',
  'audio/wave': 'audio',
  'audio/vnd.wave': 'audio',
  'audio/mpeg': 'audio',
  'audio/mp3': 'audio',
  'audio/aac': 'audio',
  'audio/mp4': 'audio',
  'audio/x-m4a': 'audio',
  'audio/flac': 'audio',
  'audio/ogg': 'audio',
  'application/pdf': 'document',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'document',
  'text/plain': 'document',
  'text/markdown': 'document',
};

/** The kind an upload announces: its declared type, or a LoRA for a `.safetensors` name sent as octet-stream. */
export function declaredKind(contentType: string, fileName: string): AssetKind | undefined {
  const type = normalizeType(contentType);
  if (/\.safetensors$/i.test(fileName) && (type === 'application/octet-stream' || type === 'application/x-safetensors'))
    return 'lora';
  return DECLARED[type];
}

/** `Image/PNG; charset=x` -> `image/png`. */
export function normalizeType(contentType: string): string {
  return contentType.split(';')[0].trim().toLowerCase();
}

/**
 * How much of the start of a file the probe reads: type signatures, image headers (dimensions,
 * transparency) and text checks all sit in the first MiB; a safetensors header is as long as its
 * own length field says, up to SAFETENSORS_HEADER_MAX.
 */
export const HEAD_BYTES = 1024 * 1024;
/** The longest safetensors JSON header accepted (real LoRA headers are tens or hundreds of KiB). */
export const SAFETENSORS_HEADER_MAX = 16 * 1024 * 1024;
/** The longest MP4/QuickTime movie header (moov) read; a file with a longer one is not probed. */
const MOOV_MAX = 64 * 1024 * 1024;

/** The number of first bytes `sniff` needs, from the first few (see `peek`). */
export function headWanted(prefix: Uint8Array): number {
  if (prefix.byteLength >= 9 && prefix[8] === 0x7b) {
    const length = Buffer.from(prefix.buffer, prefix.byteOffset, prefix.byteLength).readBigUInt64LE(0);
    if (length <= BigInt(SAFETENSORS_HEADER_MAX)) return Math.max(HEAD_BYTES, 8 + Number(length));
  }
  return HEAD_BYTES;
}

/** Only the type, cheaply, from the head of a file (file-type reads the first bytes; LoRA and text by their own shape). */
export async function sniff(head: Uint8Array): Promise<{ kind: AssetKind; format: string; mime: string } | undefined> {
  const { fileTypeFromBuffer } = await import('file-type');
  const type = await fileTypeFromBuffer(head).catch(() => undefined);
  const known = type && DETECTED[type.ext];
  if (known) return { ...known, mime: type.mime === 'audio/vnd.wave' ? 'audio/wav' : type.mime };
  if (type) return undefined;
  if (isSafetensors(head)) return { kind: 'lora', format: 'safetensors', mime: 'application/octet-stream' };
  if (isText(head)) return { kind: 'document', format: 'txt', mime: 'text/plain' };
  return undefined;
}

/** A file to probe without holding it: its size, its head (see `headWanted`) and its bytes again from the start. */
export interface ProbeSource {
  size: number;
  head: Buffer;
  open(): Promise<AsyncIterable<Buffer>>;
  /** The bytes from `offset` on, when the source can seek (a stored object read by ranges): large boxes are then jumped over, not read. */
  openAt?(offset: number): Promise<AsyncIterable<Buffer>>;
  /** The longest MP4/QuickTime movie header read (default MOOV_MAX); a file with a longer one is not probed. */
  moovMaxBytes?: number;
}

/** The whole probe of bytes in memory (small files, tests). */
export function probeBytes(bytes: Uint8Array): Promise<Probed | undefined> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return probeSource({ size: buffer.length, head: buffer, open: async () => once(buffer) });
}

async function* once(buffer: Buffer): AsyncGenerator<Buffer> {
  yield buffer;
}

/** The probe of a stored object, read as a stream (twice at most: the head, then movie or audio headers). */
export async function probeStored(
  blobs: BlobStore,
  key: string,
): Promise<{ probed: Probed | undefined; size: number } | undefined> {
  const info = await blobs.stat(key);
  if (!info) return undefined;
  const from = async (start: number, end = info.size - 1) => {
    const range = await blobs.readRange(key, { start, end });
    if (!range) throw new Error(`blob ${key} vanished while probed`);
    return range.stream as AsyncIterable<Buffer>;
  };
  // Ranges, never the whole object: the head as far as sniff may ask, then the boxes the movie walk needs.
  const { head, close } = await peek(await from(0, HEAD_READ_MAX - 1), headWanted);
  await close();
  return {
    probed: await probeSource({ size: info.size, head, open: () => from(0), openAt: (offset) => from(offset) }),
    size: info.size,
  };
}

/** The most `headWanted` asks for: a safetensors header at its longest, after its 8-byte length. */
const HEAD_READ_MAX = Math.max(HEAD_BYTES, 8 + SAFETENSORS_HEADER_MAX);
/** A box longer than this is jumped over with a new range read (where the source can seek) rather than read through. */
const SEEK_OVER_BYTES = 1024 * 1024;

/**
 * The whole probe: type, then dimensions and transparency (images, from the head), duration and
 * fps (MP4/QuickTime: the movie header found by walking the top-level boxes), duration (other
 * video and audio: music-metadata reading the stream as far as it needs).
 */
export async function probeSource(source: ProbeSource): Promise<Probed | undefined> {
  const { head } = source;
  const type = await sniff(head);
  if (!type) return undefined;
  if (type.kind === 'image') {
    try {
      const { imageSize } = await import('image-size');
      const size = imageSize(head);
      if (!size.width || !size.height) return undefined;
      return { ...type, width: size.width, height: size.height, hasAlpha: hasTransparency(type.format, head) };
    } catch {
      return undefined;
    }
  }
  if (type.kind === 'video' && (type.format === 'mp4' || type.format === 'mov')) {
    const movie = await readMovie(source, source.moovMaxBytes ?? MOOV_MAX);
    if (!movie) return undefined;
    const video = movie.videoTracks[0];
    if (!video) {
      // An MP4 container with sound only is audio (for instance an .m4a sent as .mp4).
      return movie.audioTracks.length
        ? { kind: 'audio', format: 'm4a', mime: 'audio/mp4', durationSeconds: seconds(movie.duration, movie.timescale) }
        : undefined;
    }
    const trackSeconds = video.timescale > 0 ? video.duration / video.timescale : 0;
    return {
      ...type,
      width: video.video?.width || video.track_width || undefined,
      height: video.video?.height || video.track_height || undefined,
      durationSeconds: seconds(movie.duration, movie.timescale) ?? seconds(video.duration, video.timescale),
      fps: trackSeconds > 0 ? round(video.nb_samples / trackSeconds, 3) : undefined,
    };
  }
  if (type.kind === 'video' || type.kind === 'audio') {
    const stream = Readable.from(await source.open(), { objectMode: false });
    const { parseStream } = await import('music-metadata');
    const metadata = await parseStream(
      stream,
      { mimeType: type.mime, size: source.size },
      { duration: true, skipCovers: true },
    ).catch(() => undefined);
    stream.destroy();
    if (!metadata && type.kind === 'audio') return undefined;
    const duration = metadata?.format.duration;
    return {
      ...type,
      durationSeconds: duration !== undefined && Number.isFinite(duration) ? round(duration, 3) : undefined,
    };
  }
  return type;
}

/**
 * The movie header of an MP4 or QuickTime file, with mp4box.js; undefined when it cannot be read.
 * The top-level boxes are walked as the bytes stream by: `ftyp` and `moov` are kept, media data
 * (`mdat`, most of the file) is skipped, so only the headers are ever in memory.
 */
async function readMovie(source: ProbeSource, moovMax: number): Promise<Movie | undefined> {
  // mp4box.js logs every box it reads at its default level; set here, not when this module loads (imports have no side effects).
  const { createFile, Log } = await import('mp4box');
  Log.setLogLevel(Log.error);
  let iterator = (await source.open())[Symbol.asyncIterator]();
  let reader = new ByteReader(iterator);
  const kept: Buffer[] = [];
  /** Where the reader is in the file. */
  let position = 0;
  try {
    for (;;) {
      const header = await reader.read(8);
      position += header.length;
      if (header.length < 8) break;
      let size = header.readUInt32BE(0);
      const type = header.toString('latin1', 4, 8);
      let headerBytes = header;
      if (size === 1) {
        const large = await reader.read(8);
        if (large.length < 8) break;
        size = Number(large.readBigUInt64BE(0));
        headerBytes = Buffer.concat([header, large]);
        position += large.length;
      }
      const bodyBytes = size === 0 ? Infinity : size - headerBytes.length;
      if (bodyBytes < 0) return undefined;
      if (type === 'ftyp' || type === 'moov') {
        if (bodyBytes > moovMax) return undefined;
        const body = await reader.read(bodyBytes);
        if (body.length < bodyBytes) return undefined;
        kept.push(headerBytes, body);
        position += body.length;
        if (type === 'moov') break;
      } else if (size === 0) break;
      else if (source.openAt && bodyBytes > SEEK_OVER_BYTES) {
        // Media data (most of the file) is jumped over: the next box is read from where it starts.
        position += bodyBytes;
        if (position >= source.size) break;
        await iterator.return?.();
        iterator = (await source.openAt(position))[Symbol.asyncIterator]();
        reader = new ByteReader(iterator);
      } else if (!(await reader.skip(bodyBytes))) break;
      else position += bodyBytes;
    }
  } finally {
    await iterator.return?.();
  }
  if (!kept.length) return undefined;
  const file = createFile();
  let movie: Movie | undefined;
  file.onReady = (info) => {
    movie = info;
  };
  file.onError = () => {};
  try {
    const headers = Buffer.concat(kept);
    const copy = new Uint8Array(headers).buffer as MP4BoxBuffer;
    copy.fileStart = 0;
    file.appendBuffer(copy);
    file.flush();
  } catch {
    return undefined;
  }
  return movie;
}

function seconds(duration: number, timescale: number): number | undefined {
  return timescale > 0 && duration > 0 ? round(duration / timescale, 3) : undefined;
}

function round(value: number, places: number): number {
  const f = 10 ** places;
  return Math.round(value * f) / f;
}

/** safetensors: an 8-byte little-endian header length, then that many bytes of a JSON object. */
function isSafetensors(bytes: Uint8Array): boolean {
  if (bytes.byteLength < 10) return false;
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = b.readBigUInt64LE(0);
  if (length < 2n || length > BigInt(Math.min(b.length - 8, SAFETENSORS_HEADER_MAX))) return false;
  if (b[8] !== 0x7b) return false;
  try {
    const header = JSON.parse(b.toString('utf8', 8, 8 + Number(length))) as unknown;
    return typeof header === 'object' && header !== null && !Array.isArray(header);
  } catch {
    return false;
  }
}

/** Plain text (TXT, Markdown): UTF-8 without NUL bytes in the first 64 KiB. */
function isText(bytes: Uint8Array): boolean {
  if (bytes.byteLength === 0) return false;
  const head = bytes.subarray(0, 64 * 1024);
  if (head.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
    return true;
  } catch {
    return false;
  }
}
