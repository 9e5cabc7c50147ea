/**
 * Diagnosis only (never in the figures): the worker change proposed for runtime/worker/worker.ts,
 * applied from outside by a preload so that its effect can be measured side by side. Under a
 * stream of createTask calls the worker claims one or two items per pass (each pass = a claim
 * SELECT, one UPDATE per item, the handlers); after a pass that did not fill its batch, this waits
 * a few milliseconds before claiming again, so that items accumulate and go in one pass.
 *   node --import tsx --import ./bench/worker-batch-preload.ts bin/mediaforge.js serve ...
 */
import { Worker } from '../runtime/worker/worker.js';

const GATHER_MS = Number(process.env.MEDIAFORGE_BENCH_GATHER_MS ?? 10);
const runOnce = Worker.prototype.runOnce;
Worker.prototype.runOnce = async function (this: Worker) {
  const processed = await runOnce.call(this);
  if (processed > 0 && processed < 32) await new Promise((resolve) => setTimeout(resolve, GATHER_MS));
  return processed;
};
