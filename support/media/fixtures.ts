import { deflateSync } from 'node:zlib';
import jpeg from 'jpeg-js';
import { catalogue } from '../../generated/catalogue.js';
import { simulatedFrame } from '../../runtime/simulator/simulated-output.js';
import { syntheticVideo } from '../../runtime/simulator/synthetic/synthetic-video.js';

/** Real small media files, made in the test run (nothing downloaded, nothing hand-waved). */

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Buffer): number {
  let c = 0xffffffff;
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A PNG of width x height: RGBA (colour type 6, with transparency) or RGB (colour type 2, opaque). */
export function png(width: number, height: number, alpha: boolean): Buffer {
  const channels = alpha ? 4 : 3;
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = alpha ? 6 : 2;
  const raw = Buffer.alloc((width * channels + 1) * height);
  for (let y = 0; y < height; y++) {
    const row = y * (width * channels + 1);
    for (let x = 0; x < width; x++) {
      const p = row + 1 + x * channels;
      raw[p] = (x * 255) / width;
      raw[p + 1] = (y * 255) / height;
      raw[p + 2] = 128;
      if (alpha) raw[p + 3] = x < width / 2 ? 0 : 255;
    }
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A baseline JPEG (jpeg-js encoder). */
export function jpg(width: number, height: number): Buffer {
  const data = Buffer.alloc(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    data[i * 4] = i % 251;
    data[i * 4 + 1] = (i >> 3) % 255;
    data[i * 4 + 2] = 90;
    data[i * 4 + 3] = 255;
  }
  return jpeg.encode({ data, width, height }, 80).data;
}

/** A PCM WAV: 16-bit mono at 8 kHz, a 440 Hz tone of `seconds`. */
export function wav(seconds: number, rate = 8000): Buffer {
  const samples = Math.round(seconds * rate);
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++)
    data.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), i * 2);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8, 'latin1');
  header.write('fmt ', 12, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

/** A real 2-second MP4: H.264 160x90 at 4 frames per second with silent AAC. */
export function mp4(): Buffer {
  return clip(2);
}

/**
 * A real MP4 of `seconds` (H.264 160x90 at 4 frames per second unless said, silent AAC), written
 * by the simulator's own writer; test/deployments/simulator-output.test.ts checks that writer's
 * files with ffprobe and ffmpeg.
 */
export function clip(
  seconds: number,
  frameRate = 4,
  frame: { width: number; height: number; brands?: string[] } = { width: 160, height: 90 },
): Buffer {
  return Buffer.concat([
    ...syntheticVideo({
      width: frame.width,
      height: frame.height,
      frameRate,
      seconds,
      brands: frame.brands ?? ['isom', 'iso2', 'avc1', 'mp41'],
      audio: true,
    }).pieces(),
  ]);
}

/**
 * The clip a request asks of a catalogue model: its frame (the model's size table at the asked
 * aspect ratio and resolution, as the simulator draws it) in the asked container, at 4 frames per
 * second; for a model the catalogue does not know (an upstream's own name for it), the frame its
 * input names (clipAskedBy). A loopback upstream answers with it
 * so that its result matches the request (the service checks that: runtime/worker/result-check.ts).
 */
export function askedClip(modelId: unknown, input: Record<string, unknown>, seconds: number): Buffer {
  const model = typeof modelId === 'string' ? catalogue.get(modelId)?.info : undefined;
  // A model under the upstream's own name (a route's upstreamModel): the frame its input names.
  if (!model) return clipAskedBy(input, seconds);
  const { output } = model;
  const container =
    (typeof input.output_format === 'string' ? output.containers[input.output_format] : undefined) ??
    output.containers[output.defaultContainer];
  return clip(seconds, 4, { ...simulatedFrame(model, input), brands: container.brands });
}

/** A minimal valid .safetensors file: header length, a JSON header, the tensor bytes. */
export function safetensors(): Buffer {
  const header = Buffer.from(
    JSON.stringify({
      __metadata__: { format: 'pt' },
      'lora.down.weight': { dtype: 'F32', shape: [2, 2], data_offsets: [0, 16] },
    }),
  );
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(header.length));
  return Buffer.concat([length, header, Buffer.alloc(16, 1)]);
}

/** Short sides of the named resolutions a request may carry under a provider's names (2k: 2560x1440, as the catalogue's sizes). */
const NAMED_SHORT_SIDES: Record<string, number> = { '2k': 1440, '4k': 2160 };

/**
 * The frame a provider's request asks for, read from its body under whatever names the provider
 * uses: a `WxH` or `W*H` size, else a resolution (`720p`, `1080P`, `2k`) with an aspect ratio
 * (`16:9`; landscape 16:9 when none is named). Undefined when the body names no size.
 */
export function frameAskedBy(body: unknown): { width: number; height: number } | undefined {
  const strings: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') strings.push(value);
    else if (Array.isArray(value)) for (const entry of value) walk(entry);
    else if (typeof value === 'object' && value !== null) for (const entry of Object.values(value)) walk(entry);
  };
  walk(body);
  for (const text of strings) {
    const size = /^(\d{3,4})\s*[x*]\s*(\d{3,4})$/i.exec(text);
    if (size) return { width: Number(size[1]) & ~1, height: Number(size[2]) & ~1 };
  }
  let short: number | undefined;
  let ratio: [number, number] | undefined;
  for (const text of strings) {
    const named = /^(\d{3,4})p$/i.exec(text);
    if (short === undefined && named) short = Number(named[1]);
    if (short === undefined && NAMED_SHORT_SIDES[text.toLowerCase()]) short = NAMED_SHORT_SIDES[text.toLowerCase()];
    const shape = /^(\d{1,2}):(\d{1,2})$/.exec(text);
    if (ratio === undefined && shape && Number(shape[1]) > 0 && Number(shape[2]) > 0)
      ratio = [Number(shape[1]), Number(shape[2])];
  }
  if (short === undefined) return undefined;
  const [w, h] = ratio ?? [16, 9];
  // Even sides, as 4:2:0 video has them (1366x768 for 768p at 16:9).
  const long = 2 * Math.round((short * Math.max(w, h)) / Math.min(w, h) / 2);
  return w >= h ? { width: long, height: short } : { width: short, height: long };
}

/**
 * The clip a loopback provider answers a request with: `seconds` long at the frame its body asks
 * for (frameAskedBy), 1280x720 where the body names none (the catalogue's common default), so that
 * the service's check of the result against the request (runtime/worker/result-check.ts) passes
 * as it would with a real provider.
 */
export function clipAskedBy(body: unknown, seconds: number): Buffer {
  return clip(seconds, 4, frameAskedBy(body) ?? { width: 1280, height: 720 });
}
