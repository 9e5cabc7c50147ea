/**
 * Stretches in which this process's event loop did not turn, printed where they happened (issue
 * 38). vitest's forks talk to the main process over an rpc whose timeout is fixed at 60 s; a fork
 * (or the main process) that stops turning that long fails the run with `Timeout calling
 * "onTaskUpdate"` and no word of where. Node runs expired timers before it reads the reply that
 * came meanwhile, so a stall past 60 s is enough. Printing each long stall with the test that was
 * running names the culprit in the CI log. A report only, never an assertion: timings belong in bench/.
 */

/** A stall: how long the loop did not turn beyond the tick, and when it was seen. */
export interface Stall {
  stalledMs: number;
  at: number;
}

/**
 * Calls `report` for every stretch of at least `thresholdMs` in which a `tickMs` timer came late;
 * the returned function stops watching, and reports the stretch it ends if that one is as long: a
 * file whose tests never yield stalls until its last test, and its afterAll stops the watch before
 * the late timer could run. The timer never keeps the process alive.
 */
export function watchEventLoop(report: (stall: Stall) => void, thresholdMs = 10_000, tickMs = 1_000): () => void {
  let last = performance.now();
  const check = () => {
    const now = performance.now();
    const stalledMs = now - last - tickMs;
    last = now;
    if (stalledMs >= thresholdMs) report({ stalledMs, at: Date.now() });
  };
  const timer = setInterval(check, tickMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    check();
  };
}

/** The line printed for a stall: the process, how long, and what it was running. */
export function stallLine(who: string, stall: Stall, running: string): string {
  return `EVENT LOOP STALL: ${who} (pid ${process.pid}) did not turn for ${(stall.stalledMs / 1000).toFixed(1)} s, until ${new Date(stall.at).toISOString()}, in ${running}\n`;
}
