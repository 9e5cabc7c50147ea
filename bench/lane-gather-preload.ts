/**
 * Diagnosis only (never in the figures): the worker change proposed for runtime/worker/worker.ts
 * by bench/profiles.ts's poll figure, applied from outside by a preload so that its effect can be
 * measured side by side. A lane claims again as soon as one of its own items ends (LaneLoop's
 * `wake`), so with thousands of upstream polls coming due one at a time, every poll costs a claim
 * statement of its own (about 0.8 ms, most of a poll's CPU). This spaces a lane's claims at least
 * MEDIAFORGE_BENCH_GATHER_MS apart (default 10, the worker's GATHER_MS), so that a claim takes the
 * items that came due meanwhile.
 *   node --import tsx --import ./bench/lane-gather-preload.ts bin/mediaforge.js serve ...
 */
import { Worker } from '../runtime/worker/worker.js';

const GATHER_MS = Number(process.env.MEDIAFORGE_BENCH_GATHER_MS ?? 10);
const lastClaim = new WeakMap<object, number>();
const claimNow = Worker.prototype.claimNow;
Worker.prototype.claimNow = async function (this: Worker, scope, limit) {
  const wait = (lastClaim.get(scope.kinds) ?? 0) + GATHER_MS - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  lastClaim.set(scope.kinds, Date.now());
  return claimNow.call(this, { ...scope, now: Date.now() }, limit);
};
