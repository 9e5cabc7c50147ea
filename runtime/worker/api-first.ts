/**
 * The API before the worker, where the two share one event loop (`serve --role all`, the embedded
 * default). A worker draining a backlog fills every slot of its lanes, item after item: on a loop
 * also answering requests at half their peak rate, the two together ask for more than the loop has,
 * and every answer waits behind the worker's items (bench/backlog.ts: recordInfo's p99 rose from
 * 71 ms to 3.1 s while 5,000 queued tasks drained). So while requests are arriving, the worker's
 * slots follow how late the loop runs what is ready (its delay, what a request's next step waits):
 * cut to a quarter each turn the delay passed LAG_MS (a slow retreat lets the requests pile up
 * meanwhile), given back a step at a time when it did not, and all of them once no request has come
 * for a while. The loop's delay, not how busy it is: a worker alone on a busy loop (few requests, or
 * each answered at once) keeps its pace. A lane keeps at least one slot: the worker slows, it never
 * stops. Without requests (a worker-only process, a quiet API) nothing changes.
 */
import { type IntervalHistogram, monitorEventLoopDelay, performance } from 'node:perf_hooks';

/** The loop's delay (the longest over a turn) above which the worker gives way. */
export const LAG_MS = 10;
/** How long a request keeps the API counted as busy. */
export const API_BUSY_MS = 250;
/** How often the worker's share is judged (the turn). */
export const TURN_MS = 50;
/** What a turn over LAG_MS divides the share by: from every slot to the floor in three turns. */
export const BACK_OFF = 4;
/** What a turn within LAG_MS gives back, as a share of each lane's slots. */
export const STEP = 1 / 16;
/** The least share while the API is busy (each lane keeps one slot in any case). */
export const FLOOR = 1 / 64;

/** What one turn saw: whether requests came, and the longest the loop ran late. */
export interface Turn {
  apiBusy: boolean;
  lagMs: number;
}

/** The worker's share of its slots after a turn (1: every slot). */
export function nextShare(share: number, turn: Turn): number {
  if (!turn.apiBusy) return 1;
  if (turn.lagMs > LAG_MS) return Math.max(FLOOR, share / BACK_OFF);
  return Math.min(1, share + STEP);
}

/** A lane's slots at a share: at least one. */
export function slotsAt(share: number, concurrency: number): number {
  return Math.max(Math.min(1, concurrency), Math.floor(concurrency * share));
}

export class ApiFirst {
  private share = 1;
  private lastRequestAt = Number.NEGATIVE_INFINITY;
  private turnStartedAt = performance.now();
  /** The loop's delay, sampled every few milliseconds while the worker runs (start to stop). */
  private delay?: IntervalHistogram;

  /** The worker started: the loop's delay is watched. */
  start(): void {
    this.delay ??= monitorEventLoopDelay({ resolution: 5 });
    this.delay.enable();
  }

  stop(): void {
    this.delay?.disable();
  }

  /** A request arrived (the HTTP server's first hook). */
  requestSeen(): void {
    this.lastRequestAt = performance.now();
  }

  /** How many of a lane's `concurrency` slots the worker may fill now. */
  slots(concurrency: number): number {
    const now = performance.now();
    if (this.delay && now - this.turnStartedAt >= TURN_MS) {
      // The histogram's values are nanoseconds past the sampling timer's due time.
      const lagMs = this.delay.count > 0 ? this.delay.max / 1e6 : 0;
      this.share = nextShare(this.share, { apiBusy: now - this.lastRequestAt < API_BUSY_MS, lagMs });
      this.delay.reset();
      this.turnStartedAt = now;
    }
    return slotsAt(this.share, concurrency);
  }
}
