import { deflateSync } from 'node:zlib';
import jpeg from 'jpeg-js';
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
export function clip(seconds: number, frameRate = 4): Buffer {
  return Buffer.concat([
    ...syntheticVideo({
      width: 160,
      height: 90,
      frameRate,
      seconds,
      brands: ['isom', 'iso2', 'avc1', 'mp41'],
      audio: true,
    }).pieces(),
  ]);
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
