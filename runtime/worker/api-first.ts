/**
 * The API before the worker, where the two share one event loop (`serve --role all`, the embedded
 * default). A worker draining a backlog fills every slot of its lanes, item after item: on a loop
 * also answering requests at half their peak rate, the two together ask for more than the loop has,
 * and every answer waits behind the worker's items (bench/backlog.ts, a new process draining 5,000
 * queued tasks: recordInfo's p50 1.3-2.6 s). So, turn by turn (50 ms), when the requests that arrived
 * outnumber the items the worker would have started at every slot, the worker's slots follow how
 * late the loop ran what was ready (its delay: what a request's next step waits): cut to a quarter
 * after a turn in which the delay passed LAG_MS, given back a sixteenth after a turn within it.
 * Where the requests are the smaller part of the loop's traffic (a worker finishing what a stream
 * of createTasks feeds it: bench/end-to-end.ts) or there are none (a worker-only process), every
 * slot stays in use: holding the worker back there only slowed it (end-to-end 209-280 tasks/s
 * against 571-620 when any request counted). A lane keeps at least one slot: the worker slows, it
 * never stops.
 */
import { type IntervalHistogram, monitorEventLoopDelay, performance } from 'node:perf_hooks';

/** The loop's delay (the longest over a turn) above which the worker gives way. */
export const LAG_MS = 10;
/** How often the worker's share is judged (the turn). */
export const TURN_MS = 50;
/** What a turn over LAG_MS divides the share by: from every slot to the floor in three turns. */
export const BACK_OFF = 4;
/** What a turn within LAG_MS gives back, as a share of each lane's slots. */
export const STEP = 1 / 16;
/** The least share (each lane keeps one slot in any case). */
export const FLOOR = 1 / 64;

/** What one turn saw: the requests that arrived and the work items the worker started, and the longest the loop ran late. */
export interface Turn {
  requests: number;
  items: number;
  lagMs: number;
}

/** The worker's share of its slots after a turn (1: every slot). */
export function nextShare(share: number, turn: Turn): number {
  // The worker's items are counted as at every slot (items ÷ share): a worker held back starts
  // fewer, which must not be what keeps it held back.
  if (turn.requests === 0 || turn.requests < turn.items / share) return 1;
  if (turn.lagMs > LAG_MS) return Math.max(FLOOR, share / BACK_OFF);
  return Math.min(1, share + STEP);
}

/** A lane's slots at a share: at least one. */
export function slotsAt(share: number, concurrency: number): number {
  return Math.max(Math.min(1, concurrency), Math.floor(concurrency * share));
}

/** A lane at a moment: its concurrency, its slots at the share, the items it runs, and how long ago it last started one. */
export interface LaneNow {
  concurrency: number;
  slots: number;
  running: number;
  msSinceStart: number;
}

/**
 * How many items a lane may start now: its slots at the share less the items it runs. Held back
 * below what its running items hold already (long ones: results that drip for minutes), it still
 * starts one item a turn while it has a slot at all, so that one account's long items (the account
 * cap keeps them to a few slots) never stop the tasks of every other account from starting while
 * the API is busy: held back, the worker slows, it never stops.
 */
export function startable(lane: LaneNow): number {
  const free = lane.slots - lane.running;
  if (free > 0) return free;
  return lane.running < lane.concurrency && lane.msSinceStart >= TURN_MS ? 1 : 0;
}

export class ApiFirst {
  private share = 1;
  private requests = 0;
  private items = 0;
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
    this.requests++;
  }

  /** The worker started `count` items. */
  itemsStarted(count: number): void {
    this.items += count;
  }

  /** How many of a lane's `concurrency` slots the worker may fill now. */
  slots(concurrency: number): number {
    const now = performance.now();
    if (this.delay && now - this.turnStartedAt >= TURN_MS) {
      // The histogram's values are nanoseconds past the sampling timer's due time.
      const lagMs = this.delay.count > 0 ? this.delay.max / 1e6 : 0;
      this.share = nextShare(this.share, { requests: this.requests, items: this.items, lagMs });
      this.delay.reset();
      this.requests = 0;
      this.items = 0;
      this.turnStartedAt = now;
    }
    return slotsAt(this.share, concurrency);
  }
}
