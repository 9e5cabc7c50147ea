/**
 * Pauses of one process, for diagnosis (never in the figures): garbage-collection pauses of 2 ms
 * or more and event-loop stalls of 15 ms or more (a 5 ms timer firing that late: the thread was
 * busy, or the process was not scheduled), each appended as a JSON line with its wall-clock time.
 * As a preload of a service process it watches when MEDIAFORGE_PAUSES_FILE names a file:
 *   node --import tsx --import ./bench/pause-watch.ts bin/mediaforge.js serve
 * bench/p99-pauses.ts watches the service this way and its own process with `watchPauses`.
 */
import { appendFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';

export interface Pause {
  kind: 'gc' | 'stall';
  /** Wall-clock ms (Date.now()) when it began (gc) or was noticed (stall). */
  at: number;
  ms: number;
}

const GC_MS = 2;
const STALL_MS = 15;
const TICK_MS = 5;

export function watchPauses(file: string): () => void {
  const write = (pause: Pause) => appendFileSync(file, `${JSON.stringify(pause)}\n`);
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries())
      if (entry.duration >= GC_MS)
        write({ kind: 'gc', at: Math.round(performance.timeOrigin + entry.startTime), ms: entry.duration });
  });
  observer.observe({ entryTypes: ['gc'] });
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    const late = now - last - TICK_MS;
    if (late >= STALL_MS) write({ kind: 'stall', at: Math.round(performance.timeOrigin + now), ms: late });
    last = now;
  }, TICK_MS);
  timer.unref();
  return () => {
    observer.disconnect();
    clearInterval(timer);
  };
}

const file = process.env.MEDIAFORGE_PAUSES_FILE;
if (file) watchPauses(`${file}.${process.pid}`);
