/**
 * The simulator's outputs (issue 21 item 3): what writing one costs, in process, through
 * simulatedOutputs (what the deployment hands the worker), every byte consumed as the blob store
 * consumes it.
 *   - the biggest case: 3840x2160, 60 s at 24 fps, with sound, and its last frame as PNG;
 *   - a typical task: 1280x720, 5 s (the defaults of most models).
 * "Render": a fresh RenderCache, so the files are written; "kept": the same shape again, as the
 * next task of that shape gets it. Times are the best of a few rounds (interference only slows a
 * round down). "Sync" is the part that holds the event loop: the call itself, which renders a
 * video of a new shape whole (the PNG is compressed as it streams, off the loop). The RSS growth
 * is the worst over all rounds.
 */
import { catalogue } from '../generated/catalogue.js';
import { RenderCache } from '../runtime/simulator/render-cache.js';
import { simulatedOutputs } from '../runtime/simulator/simulated-output.js';
import { isMain, round, type BenchOutput, type RunMode } from './support.js';

/** A model with 16:9 at 4k and 720p, sound and the last-frame field. */
const MODEL = 'vendor_a/family_a-2.0/text-to-video';
const BIG = { prompt: 'x', aspect_ratio: '16:9', resolution: '4k', return_last_frame: true };
const TYPICAL = { prompt: 'x', aspect_ratio: '16:9', resolution: '720p' };

async function drain(source: unknown): Promise<number> {
  if (source instanceof Uint8Array) return source.length;
  let bytes = 0;
  for await (const chunk of source as AsyncIterable<Buffer>) bytes += chunk.length;
  return bytes;
}

/** Wall time and bytes of each output of one task. */
async function once(cache: RenderCache, input: Record<string, unknown>, seconds: number) {
  const info = catalogue.get(MODEL)!.info;
  const t0 = performance.now();
  const outputs = simulatedOutputs(cache, info, input, seconds);
  const syncMs = performance.now() - t0;
  const video = await drain(outputs[0].bytes);
  const t1 = performance.now();
  const image = outputs[1] ? await drain(outputs[1].bytes) : 0;
  const t2 = performance.now();
  return { syncMs, videoMs: t1 - t0, videoBytes: video, imageMs: t2 - t1, imageBytes: image };
}

type Run = Awaited<ReturnType<typeof once>>;
const best = (runs: Run[], key: 'syncMs' | 'videoMs' | 'imageMs') => Math.min(...runs.map((r) => r[key]));

export async function benchSimulator(mode: RunMode): Promise<BenchOutput> {
  const rounds = mode.quick ? 2 : 5;
  await once(new RenderCache(0), TYPICAL, 5); // warm-up: compiles the writer
  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 5);
  const runs = { big: [] as Run[], typical: [] as Run[], bigKept: [] as Run[], typicalKept: [] as Run[] };
  try {
    for (let i = 0; i < rounds; i++) {
      const cache = new RenderCache(32 * 1024 * 1024);
      runs.big.push(await once(cache, BIG, 60));
      runs.typical.push(await once(cache, TYPICAL, 5));
      runs.bigKept.push(await once(cache, BIG, 60));
      runs.typicalKept.push(await once(cache, TYPICAL, 5));
    }
  } finally {
    clearInterval(sampler);
  }
  return {
    figures: {
      simulator4k60sVideoMs: round(best(runs.big, 'videoMs'), 1),
      simulator4k60sVideoBytes: runs.big[0].videoBytes,
      simulator4kLastFrameMs: round(best(runs.big, 'imageMs'), 1),
      simulator4kLastFrameBytes: runs.big[0].imageBytes,
      simulator720p5sVideoMs: round(best(runs.typical, 'videoMs'), 2),
      simulator720p5sVideoBytes: runs.typical[0].videoBytes,
      simulatorKept4kMs: round(best(runs.bigKept, 'videoMs') + best(runs.bigKept, 'imageMs'), 3),
      simulatorKept720pMs: round(best(runs.typicalKept, 'videoMs'), 3),
      simulator4k60sSyncMs: round(best(runs.big, 'syncMs'), 1),
      simulatorRssGrowthMb: round((rssPeak - rssBefore) / 1024 / 1024, 1),
    },
    notes: [
      `simulator: ${MODEL} through simulatedOutputs, every byte read; 3840x2160 60 s 24 fps with AAC and the last frame, and 1280x720 5 s; rendered (a fresh cache) and kept (the same shape again); ${rounds} rounds after a warm-up, best round; sync: the synchronous call (a new shape's video is rendered in it); RSS growth (sampled every 5 ms) over all rounds`,
    ],
  };
}

if (isMain(import.meta.url)) {
  console.log(JSON.stringify(await benchSimulator({ quick: process.argv.includes('--quick') })));
}
