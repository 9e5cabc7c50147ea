// @store-suite: the simulator's outputs are written to the store (vitest.config.ts runs it on the local and the S3 store).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogue } from '../../generated/catalogue.js';
import { createTask, expectOk } from '../http/helpers.js';
import {
  decodeErrors,
  ffprobe,
  firstPictureRgb,
  lastPictureRgb,
  requireFfmpeg,
  type ProbedFile,
} from '../support/ffmpeg.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';

/**
 * Issue 21 item 3: the simulator keeps the output promises. A task's stored output is read back
 * through its signed link and checked by ffprobe and ffmpeg (not by our own writer): the container
 * and media type asked for (mov: QuickTime), the width and height of the model's size table for
 * the asked resolution and aspect ratio, the model's frame rate, the length, the sound, and every
 * frame decoding cleanly; `return_last_frame: true` adds a PNG of the same size that shows the
 * video's last frame, false adds nothing.
 */
const RUN = requireFfmpeg('test/deployments/simulator-output.test.ts');
const PROMPT = 'A red fox trots through fresh snow at dawn.';
const MP4 = { brand: 'isom', mime: 'video/mp4', extension: 'mp4' };
const MOV = { brand: 'qt  ', mime: 'video/quicktime', extension: 'mov' };

interface Want {
  file: typeof MP4;
  width: number;
  height: number;
  fps: number;
  seconds: number;
  sound: boolean;
  lastFrame: boolean;
}

/** Sizes are the spec's (spec/shared/output-sizes.yaml), written out here, not read from the catalogue. */
const ROWS: [string, { model: string; input: Record<string, unknown>; want: Want }][] = [
  [
    'family_a-2.5 text-to-video: mov, 21:9 at 1080p, with the last frame',
    {
      model: 'vendor_a/family_a-2.5/text-to-video',
      input: {
        output_format: 'mov',
        aspect_ratio: '21:9',
        resolution: '1080p',
        duration_seconds: 4,
        return_last_frame: true,
      },
      want: { file: MOV, width: 2520, height: 1080, fps: 24, seconds: 4, sound: true, lastFrame: true },
    },
  ],
  [
    'family_a-2.5 text-to-video: mp4 asked, adaptive at 480p (the 16:9 stand-in), return_last_frame false',
    {
      model: 'vendor_a/family_a-2.5/text-to-video',
      input: { output_format: 'mp4', resolution: '480p', duration_seconds: 4, return_last_frame: false },
      want: { file: MP4, width: 854, height: 480, fps: 24, seconds: 4, sound: true, lastFrame: false },
    },
  ],
  [
    'family_a-2.0 text-to-video: 9:16 at 4k',
    {
      model: 'vendor_a/family_a-2.0/text-to-video',
      input: { aspect_ratio: '9:16', resolution: '4k', duration_seconds: 5 },
      want: { file: MP4, width: 2160, height: 3840, fps: 24, seconds: 5, sound: true, lastFrame: false },
    },
  ],
  [
    "family_c-2.6 text-to-video: its own size table's 1:1 at 1080p",
    {
      model: 'vendor_b/family_c-2.6/text-to-video',
      input: { aspect_ratio: '1:1', resolution: '1080p', duration_seconds: 2 },
      want: { file: MP4, width: 1440, height: 1440, fps: 24, seconds: 2, sound: true, lastFrame: false },
    },
  ],
  [
    'family_c-3.0 text-to-video: 4:3 at 480p, generate_audio false',
    {
      model: 'vendor_b/family_c-3.0/text-to-video',
      input: { aspect_ratio: '4:3', resolution: '480p', duration_seconds: 3, generate_audio: false },
      want: { file: MP4, width: 640, height: 480, fps: 24, seconds: 3, sound: false, lastFrame: false },
    },
  ],
  [
    'family_d text-to-video: the defaults, 16:9 at 768p (1366 wide: not a whole number of macroblocks)',
    {
      model: 'vendor_d/family_d/text-to-video',
      input: {},
      want: { file: MP4, width: 1366, height: 768, fps: 24, seconds: 5, sound: true, lastFrame: false },
    },
  ],
  [
    'q4-preview image-to-video: 2k, its published 24 fps, the shape of the 16:9 stand-in',
    {
      model: 'vendor_e/q4-preview/image-to-video',
      input: { image_url: 'https://frame.invalid/first.png', resolution: '2k', duration_seconds: 3 },
      want: { file: MP4, width: 2560, height: 1440, fps: 24, seconds: 3, sound: true, lastFrame: false },
    },
  ],
];

/** The width x height the catalogue (the docs pages) promises for a normalized input: the size table, else the simulator's stand-in. */
function promisedSize(model: string, input: Record<string, unknown>): [number, number] {
  const info = catalogue.get(model)!.info;
  const size =
    info.outputSizes?.[input.aspect_ratio as string]?.[input.resolution as string] ??
    info.output.simulator.sizesFollowingReferences[input.resolution as string];
  return size.split('x').map(Number) as [number, number];
}

describe.runIf(RUN)(
  'the simulator returns what the request asked for, as ffprobe and ffmpeg read it',
  { timeout: 120_000 },
  () => {
    let t: TestService;
    let apiKey: string;
    let dir: string;

    beforeAll(async () => {
      t = await startTestService();
      ({ apiKey } = await t.account(1_000_000));
      dir = mkdtempSync(join(tmpdir(), 'mediaforge-sim-output-'));
    });
    afterAll(async () => {
      await t?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    /** Runs a task to success; answers its record. */
    async function run(model: string, input: Record<string, unknown>) {
      const created = await createTask(t, apiKey, { model, input: { prompt: PROMPT, ...input } });
      expectOk(created, 202);
      const done = await waitForTerminal(t, apiKey, created.body.data.taskId, 60_000);
      expect(done.state, JSON.stringify(done)).toBe('succeeded');
      return done;
    }

    /** Downloads an output asset through its signed link into a file named after the task. */
    async function download(asset: { url: string }, name: string): Promise<string> {
      const response = await fetch(asset.url);
      expect(response.status).toBe(200);
      const path = join(dir, name);
      writeFileSync(path, Buffer.from(await response.arrayBuffer()));
      return path;
    }

    function expectVideo(probed: ProbedFile, want: Omit<Want, 'lastFrame'>) {
      expect(probed.format.tags?.major_brand).toBe(want.file.brand);
      expect(Number(probed.format.duration)).toBe(want.seconds);
      const video = probed.streams.filter((s) => s.codec_type === 'video');
      expect(video).toHaveLength(1);
      expect(video[0]).toMatchObject({
        codec_name: 'h264',
        width: want.width,
        height: want.height,
        r_frame_rate: `${want.fps}/1`,
        nb_frames: String(want.seconds * want.fps),
      });
      expect(Number(video[0].duration)).toBe(want.seconds);
      const audio = probed.streams.filter((s) => s.codec_type === 'audio');
      expect(audio).toHaveLength(want.sound ? 1 : 0);
      if (want.sound) {
        expect(audio[0]).toMatchObject({ codec_name: 'aac', channels: 2, sample_rate: '48000' });
        expect(Number(audio[0].duration)).toBe(want.seconds);
      }
    }

    it.each(ROWS)('%s', async (_name, { model, input, want }) => {
      const done = await run(model, input);
      const assets = done.output.assets as { url: string; mime: string; durationSeconds?: number }[];
      expect(assets.map((a) => a.mime)).toEqual(want.lastFrame ? [want.file.mime, 'image/png'] : [want.file.mime]);
      expect(assets[0].durationSeconds).toBe(want.seconds);
      expect(assets[0].url).toContain(`.${want.file.extension}`);

      const video = await download(assets[0], `${done.taskId}.${want.file.extension}`);
      expectVideo(await ffprobe(video), want);
      expect(await decodeErrors(video)).toBe('');
      // The size is the one the model's docs page promises for this input.
      expect(promisedSize(model, done.input)).toEqual([want.width, want.height]);

      if (want.lastFrame) {
        expect(assets[1].durationSeconds).toBeUndefined();
        const image = await download(assets[1], `${done.taskId}.png`);
        const probed = await ffprobe(image);
        expect(probed.streams).toMatchObject([{ codec_name: 'png', width: want.width, height: want.height }]);
        // It is the video's last frame: every pixel within the rounding of the video's Y'CbCr.
        const [still, last] = await Promise.all([
          firstPictureRgb(image, want.width, want.height),
          lastPictureRgb(video, want.width, want.height),
        ]);
        let worst = 0;
        for (let i = 0; i < still.length; i++) worst = Math.max(worst, Math.abs(still[i] - last[i]));
        expect(worst).toBeLessThanOrEqual(4);
      }
    });

    it('video-extend: the joined file lasts the clip plus the new segment, in the asked container', async () => {
      const source = await run('vendor_a/family_a-2.5/text-to-video', { duration_seconds: 4 });
      const done = await run('vendor_a/family_a-2.5/video-extend', {
        video_url: source.taskId,
        duration_seconds: 5,
        output_format: 'mov',
        resolution: '720p',
      });
      expect(done.output.assets.map((a: { mime: string }) => a.mime)).toEqual(['video/quicktime']);
      const video = await download(done.output.assets[0], `${done.taskId}.mov`);
      expectVideo(await ffprobe(video), { file: MOV, width: 1280, height: 720, fps: 24, seconds: 9, sound: true });
      expect(await decodeErrors(video)).toBe('');
    });

    it('every text-to-video and image-to-video model, at its defaults, returns the size, rate and container its docs page promises', async () => {
      const models = [...catalogue.values()]
        .map((m) => m.info)
        .filter((m) => (m.mode === 'text-to-video' || m.mode === 'image-to-video') && !m.deprecated);
      expect(models.length).toBeGreaterThanOrEqual(20);
      const frames = { image_url: 'https://frame.invalid/first.png' };
      const tasks = await Promise.all(
        models.map(async (m) => {
          const created = await createTask(t, apiKey, {
            model: m.id,
            input: { prompt: PROMPT, ...(m.mode === 'image-to-video' ? frames : {}) },
          });
          expectOk(created, 202);
          return { model: m, taskId: created.body.data.taskId as string };
        }),
      );
      for (const { model, taskId } of tasks) {
        const done = await waitForTerminal(t, apiKey, taskId, 60_000);
        expect([model.id, done.state]).toEqual([model.id, 'succeeded']);
        const container = model.output.containers[model.output.defaultContainer];
        const [width, height] = promisedSize(model.id, done.input);
        const seconds = done.output.assets[0].durationSeconds as number;
        if (done.input.duration_seconds !== -1)
          expect([model.id, seconds]).toEqual([model.id, done.input.duration_seconds]);
        const video = await download(done.output.assets[0], `${taskId}.${container.extension}`);
        const probed = await ffprobe(video);
        const stream = probed.streams.find((s) => s.codec_type === 'video');
        expect([
          model.id,
          done.output.assets.length,
          done.output.assets[0].mime,
          probed.format.tags?.major_brand,
        ]).toEqual([model.id, 1, container.mime, container.brands[0]]);
        expect([model.id, stream?.width, stream?.height, stream?.r_frame_rate, Number(probed.format.duration)]).toEqual(
          [model.id, width, height, `${model.output.frameRate}/1`, seconds],
        );
      }
    });
  },
);
