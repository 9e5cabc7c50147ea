import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';

/**
 * Debian's ffprobe and ffmpeg as an independent reader of media files: what a file says it is
 * (container brand, streams, size, rate, length), whether every frame decodes, and decoded pixels.
 * Suites that use them require them in CI (.ci/run installs ffmpeg) and are skipped elsewhere
 * with one loud line, as a machine without them cannot run them.
 */
const run = promisify(execFile);

export const HAS_FFMPEG =
  spawnSync('ffprobe', ['-version']).status === 0 && spawnSync('ffmpeg', ['-version']).status === 0;

/** Throws in CI when ffmpeg is missing; elsewhere says once, loudly, that the suite is skipped. */
export function requireFfmpeg(suite: string): boolean {
  if (HAS_FFMPEG) return true;
  if (process.env.CI)
    throw new Error(`${suite} needs Debian's ffmpeg (apt-get install -y ffmpeg; .ci/run installs it).`);
  console.warn(
    `\n!!! ${suite} SKIPPED: ffprobe/ffmpeg not found (apt-get install -y ffmpeg to run it; CI requires it).\n`,
  );
  return false;
}

export interface ProbedStream {
  codec_type: 'video' | 'audio';
  codec_name: string;
  profile?: string;
  width?: number;
  height?: number;
  r_frame_rate?: string;
  nb_frames?: string;
  duration?: string;
  channels?: number;
  sample_rate?: string;
}

export interface ProbedFile {
  streams: ProbedStream[];
  format: { format_name: string; duration?: string; tags?: Record<string, string> };
}

export async function ffprobe(path: string): Promise<ProbedFile> {
  const { stdout } = await run('ffprobe', [
    '-v',
    'error',
    '-print_format',
    'json',
    '-show_format',
    '-show_streams',
    path,
  ]);
  return JSON.parse(stdout) as ProbedFile;
}

/** Decodes every frame of every stream; answers ffmpeg's error output (empty when all decoded cleanly). */
export async function decodeErrors(path: string): Promise<string> {
  try {
    const { stderr } = await run('ffmpeg', ['-v', 'error', '-xerror', '-i', path, '-f', 'null', '-'], {
      maxBuffer: 16 * 1024 * 1024,
    });
    return stderr;
  } catch (error) {
    return String((error as { stderr?: string }).stderr || error);
  }
}

/** The first picture of a file (an image) as packed RGB, `width` x `height`. */
export async function firstPictureRgb(path: string, width: number, height: number): Promise<Buffer> {
  const { stdout } = await run(
    'ffmpeg',
    ['-v', 'error', '-i', path, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
    { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
  );
  return lastPicture(stdout, width, height);
}

/** The last picture of a video as packed RGB, `width` x `height` (the frames of its last 0.1 s are decoded). */
export async function lastPictureRgb(path: string, width: number, height: number): Promise<Buffer> {
  const { stdout } = await run(
    'ffmpeg',
    ['-v', 'error', '-sseof', '-0.1', '-i', path, '-an', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
    { encoding: 'buffer', maxBuffer: 256 * 1024 * 1024 },
  );
  return lastPicture(stdout, width, height);
}

function lastPicture(frames: Buffer, width: number, height: number): Buffer {
  const size = width * height * 3;
  if (frames.length < size || frames.length % size !== 0)
    throw new Error(`decoded ${frames.length} bytes, not whole ${width}x${height} RGB pictures`);
  return frames.subarray(frames.length - size);
}
