import { H264Bars } from './h264-bars.js';
import {
  box,
  descriptor,
  fileTypeBox,
  fullBox,
  mediaDataHeader,
  movieBox,
  u16,
  u32,
  u8,
  type TrackLayout,
} from './iso-bmff.js';
import { AAC_CHANNELS, AAC_FRAME_SAMPLES, AAC_SAMPLE_RATE, audioSpecificConfig, silentFrame } from './silent-aac.js';

export interface SyntheticVideoSpec {
  width: number;
  height: number;
  frameRate: number;
  seconds: number;
  /** The ftyp brands, the major brand first (`isom` ... for MP4, `qt  ` for QuickTime). */
  brands: string[];
  /** A silent stereo AAC-LC track beside the picture. */
  audio: boolean;
}

export interface SyntheticVideo {
  /** The file's length in bytes, known before it is written. */
  size: number;
  /** The file, from the start, in pieces of about 64 KiB (what a blob store takes). */
  chunks(): AsyncGenerator<Buffer>;
  /** The same pieces, made synchronously. */
  pieces(): Generator<Buffer>;
}

const MOVIE_TIMESCALE = 1000;
const PIECE_BYTES = 64 * 1024;
const VIDEO_TRACK = 1;
const AUDIO_TRACK = 2;

/**
 * A real, playable video file of colour bars: H.264 (see H264Bars) at the given size and frame
 * rate, for `seconds` (rounded to whole frames), with silent AAC if asked, in an ISO base media
 * file whose movie header comes first, so that players start before the media data has arrived.
 * Nothing is held beyond the headers and one picture: the samples are made again as they are
 * written, and the file is a few hundred KiB even at 4k for a minute.
 */
export function syntheticVideo(spec: SyntheticVideoSpec): SyntheticVideo {
  const h264 = new H264Bars(spec.width, spec.height, spec.frameRate);
  const idr = h264.idrPicture();
  const frames = Math.max(1, Math.round(spec.seconds * spec.frameRate));
  const picture = (index: number) => (index === 0 ? idr : h264.skippedPicture(index));
  const videoSizes = Array.from({ length: frames }, (_, i) => 4 + picture(i).length);
  const videoBytes = videoSizes.reduce((a, b) => a + b, 0);

  const silence = silentFrame();
  const audioSamples = Math.max(1, Math.round(spec.seconds * AAC_SAMPLE_RATE));
  const audioFrames = spec.audio ? Math.ceil(audioSamples / AAC_FRAME_SAMPLES) : 0;
  const audioBytes = audioFrames * silence.length;

  const ftyp = fileTypeBox(spec.brands);
  const moovFor = (dataStart: number) => {
    const tracks: TrackLayout[] = [
      {
        kind: 'video',
        id: VIDEO_TRACK,
        timescale: spec.frameRate,
        duration: frames,
        sampleEntry: avc1(h264),
        sizes: videoSizes,
        timeToSample: [[frames, 1]],
        syncSamples: [1],
        chunkOffset: dataStart,
        width: spec.width,
        height: spec.height,
      },
    ];
    if (spec.audio) {
      // The last frame is decoded whole but lasts only what the length needs, so the track ends with the video.
      const last = audioSamples - (audioFrames - 1) * AAC_FRAME_SAMPLES;
      const timeToSample: [number, number][] =
        audioFrames > 1
          ? [
              [audioFrames - 1, AAC_FRAME_SAMPLES],
              [1, last],
            ]
          : [[1, last]];
      const bitRate = Math.ceil((silence.length * 8 * AAC_SAMPLE_RATE) / AAC_FRAME_SAMPLES);
      tracks.push({
        kind: 'audio',
        id: AUDIO_TRACK,
        timescale: AAC_SAMPLE_RATE,
        duration: audioSamples,
        sampleEntry: mp4a(bitRate),
        sizes: { each: silence.length, count: audioFrames },
        timeToSample,
        chunkOffset: dataStart + videoBytes,
      });
    }
    return movieBox(tracks, MOVIE_TIMESCALE);
  };
  // The chunk offsets are fixed-width, so the movie box's size does not depend on them.
  const headerBytes = ftyp.length + moovFor(0).length + 8;
  const head = Buffer.concat([ftyp, moovFor(headerBytes), mediaDataHeader(videoBytes + audioBytes)]);

  function* pieces(): Generator<Buffer> {
    yield head;
    let piece: Buffer[] = [];
    let held = 0;
    function* add(bytes: Buffer): Generator<Buffer> {
      piece.push(bytes);
      held += bytes.length;
      if (held >= PIECE_BYTES) {
        yield Buffer.concat(piece);
        piece = [];
        held = 0;
      }
    }
    for (let i = 0; i < frames; i++) {
      const nal = picture(i);
      yield* add(Buffer.concat([u32(nal.length), nal]));
    }
    for (let i = 0; i < audioFrames; i++) yield* add(silence);
    if (held) yield Buffer.concat(piece);
  }
  return {
    size: headerBytes + videoBytes + audioBytes,
    pieces,
    async *chunks() {
      yield* pieces();
    },
  };
}

/** The H.264 sample description: the visual sample entry and its decoder configuration (avcC). */
function avc1(h264: H264Bars): Buffer {
  const name = Buffer.alloc(32);
  const avcC = box(
    'avcC',
    u8(1),
    u8(h264.profileIdc),
    u8(h264.constraintFlags),
    u8(h264.levelIdc),
    u8(0xff),
    u8(0xe1),
    u16(h264.sps.length),
    h264.sps,
    u8(1),
    u16(h264.pps.length),
    h264.pps,
  );
  return box(
    'avc1',
    Buffer.alloc(6),
    u16(1), // reserved, data_reference_index
    Buffer.alloc(16), // pre_defined, reserved
    u16(h264.width),
    u16(h264.height),
    u32(0x0048_0000),
    u32(0x0048_0000),
    u32(0),
    u16(1), // 72 dpi, reserved, frame_count
    name,
    u16(0x0018),
    u16(0xffff), // compressorname, depth, pre_defined
    avcC,
  );
}

/** The AAC sample description: the audio sample entry and its elementary stream descriptor (esds). */
function mp4a(bitRate: number): Buffer {
  const decoderConfig = descriptor(
    4,
    u8(0x40),
    u8((0x05 << 2) | 1),
    Buffer.alloc(3),
    u32(bitRate),
    u32(bitRate),
    descriptor(5, audioSpecificConfig()),
  );
  const esds = fullBox('esds', 0, 0, descriptor(3, u16(0), u8(0), decoderConfig, descriptor(6, u8(2))));
  return box(
    'mp4a',
    Buffer.alloc(6),
    u16(1), // reserved, data_reference_index
    Buffer.alloc(8), // reserved
    u16(AAC_CHANNELS),
    u16(16),
    u16(0),
    u16(0), // channels, sample size, pre_defined, reserved
    u32(AAC_SAMPLE_RATE * 0x1_0000), // 16.16
    esds,
  );
}
