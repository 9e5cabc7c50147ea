import type { Context } from '../context.js';
import { newId } from '../ids.js';
import { claimItems, nextDueAt, NO_CAP, recordOutcome, type ClaimScope, type WorkItem } from '../queue/claim.js';
import { ItemAborted, LeaseHeartbeat } from '../queue/heartbeat.js';
import { startable } from './api-first.js';
import { kindFilter, workLanes, type KindFilter, type Lane } from '../queue/lanes.js';
import type { WorkHandlers, WorkOutcome } from '../queue/work-handler.js';

/** Pause after a partial batch: a few milliseconds of latency for far fewer claim statements. */
const GATHER_MS = 10;

/**
 * Claims due work items with a lease and runs them. Work lives in the database, so a worker that
 * dies loses its lease and another takes the item over; handlers make their effect happen once.
 * Each lane (runtime/queue/lanes.ts) has its own slots and its own claims, and in each lane one
 * account holds at most workerAccountCap leases at a time.
 */
export class Worker {
  readonly owner = newId('worker', 6);
  private readonly lanes: LaneLoop[];
  private wakeTimer?: NodeJS.Timeout;
  /** The items running now, each with what aborts it (shutdown). */
  private readonly inFlight = new Set<AbortController>();

  constructor(
    private readonly ctx: Context,
    private readonly handlers: WorkHandlers,
  ) {
    const lanes = workLanes(ctx.config);
    this.lanes = lanes.map((lane) => new LaneLoop(this, lane, kindFilter(lane, lanes)));
  }

  start(): void {
    this.ctx.apiFirst.start();
    for (const lane of this.lanes) lane.start();
  }

  /**
   * Stops claiming and waits for the items in flight; those still running after the shutdown grace
   * are aborted and left to run again (their lease released), so a download never holds a stop.
   */
  async stop(): Promise<void> {
    const grace = setTimeout(() => {
      if (this.inFlight.size > 0)
        this.ctx.log.warn(`${this.inFlight.size} work items still running after the shutdown grace: aborted`);
      for (const controller of this.inFlight) controller.abort(new ItemAborted('shutdown'));
    }, this.ctx.config.shutdownGraceMs);
    try {
      await Promise.all(this.lanes.map((lane) => lane.stop()));
    } finally {
      clearTimeout(grace);
    }
    clearTimeout(this.wakeTimer); // set by the items that ended while the lanes stopped
    this.wakeTimer = undefined;
    this.ctx.apiFirst.stop();
  }

  /** New work is due or a slot is free: every lane stops sleeping (or skips its next sleep). */
  wake(): void {
    for (const lane of this.lanes) lane.wake();
  }

  /**
   * An item ended: it may have made work due in another lane (a resolved task's deliveries). The
   * other lanes are woken once per GATHER_MS however many items end meanwhile, so a lane with
   * nothing to do costs a claim per gather, not one per item of the busy lanes.
   */
  wakeSoon(): void {
    this.wakeTimer ??= setTimeout(() => {
      this.wakeTimer = undefined;
      this.wake();
    }, GATHER_MS);
  }

  /**
   * Claims and runs every item due now in every lane (up to each lane's concurrency, without the
   * account cap), waiting for them; returns how many ran. Tests drive the worker with it.
   */
  async runOnce(): Promise<number> {
    const claimed = await Promise.all(
      this.lanes.map((lane) => this.claimNow(lane.scope(NO_CAP), lane.lane.concurrency)),
    );
    const items = claimed.flat();
    await Promise.all(items.map((item) => this.process(item)));
    return items.length;
  }

  /** @internal the lanes' claim: one statement, then the fault point tests crash at. */
  async claimNow(scope: ClaimScope, limit: number): Promise<WorkItem[]> {
    const items = await claimItems(this.ctx.db, scope, this.owner, scope.now + this.ctx.config.leaseMs, limit);
    if (items.length > 0) this.ctx.faults.reach('worker.claimed'); // leases taken, nothing run: they must run out and be taken again
    return items;
  }

  /** @internal */
  get context(): Context {
    return this.ctx;
  }

  /**
   * @internal runs one claimed item, its lease renewed meanwhile, and records its outcome (done, or
   * due again later). A handler that threw once aborted by the shutdown leaves its item released as
   * before its claim (due now, the attempt not counted); one whose lease was lost records nothing
   * (the update below is of the owner's lease only: the other worker records its own run).
   */
  async process(item: WorkItem): Promise<void> {
    const handler = this.handlers[item.kind as keyof WorkHandlers];
    const controller = new AbortController();
    const heartbeat = new LeaseHeartbeat(this.ctx, item, this.owner, (why) => controller.abort(new ItemAborted(why)));
    this.inFlight.add(controller);
    let outcome: WorkOutcome;
    try {
      if (!handler) throw new Error(`no handler for work kind ${item.kind}`);
      outcome = await handler(this.ctx, item, controller.signal);
    } catch (error) {
      if (controller.signal.aborted) {
        // Stopped where it was, by the shutdown (or a lease lost, where this update matches nothing): not a failure.
        this.ctx.log.warn({ item: item.id, kind: item.kind }, `work item aborted: ${String(controller.signal.reason)}`);
        outcome = { retryAt: this.ctx.clock.now(), attempts: Math.max(0, item.attempts - 1) };
      } else {
        this.ctx.log.error({ err: error, item: item.id, kind: item.kind }, 'work item failed; retrying');
        outcome = { retryAt: this.ctx.clock.now() + Math.min(60_000, 1000 * 2 ** Math.min(item.attempts, 6)) };
      }
    } finally {
      heartbeat.stop();
      this.inFlight.delete(controller);
    }
    this.ctx.faults.reach('worker.handled'); // the handler's effect is done, the item not yet marked: it runs again
    await recordOutcome(this.ctx.db, item.id, this.owner, outcome, this.ctx.clock.now());
  }
}

/** The loop of one lane: its slots, its claims, its sleep. */
class LaneLoop {
  private stopped = true;
  private timer?: NodeJS.Timeout;
  private wakeUp?: () => void;
  private loop?: Promise<void>;
  private readonly running = new Set<Promise<void>>();
  private wokenEarly = false;
  /** When this lane last sent a claim statement (performance.now()). */
  private lastClaimAt = Number.NEGATIVE_INFINITY;
  /** When this lane last started an item (performance.now()). */
  private lastStartAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly worker: Worker,
    readonly lane: Lane,
    private readonly kinds: KindFilter,
  ) {}

  scope(accountCap: number): ClaimScope {
    return { kinds: this.kinds, accountCap, now: this.worker.context.clock.now() };
  }

  private get accountCap(): number {
    const cap = this.worker.context.config.workerAccountCap;
    return cap > 0 ? cap : NO_CAP;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.loop;
  }

  wake(): void {
    if (this.wakeUp) this.wakeUp();
    else this.wokenEarly = true;
  }

  /**
   * Keeps up to the lane's concurrency in flight: a free slot is filled by the next claim, so one
   * slow item (a receiver that drips, a deployment call that hangs until its time box) holds one
   * slot, not the whole pass.
   */
  private async run(): Promise<void> {
    const ctx = this.worker.context;
    while (!this.stopped) {
      // Fewer slots while requests outnumber the worker's items on a loop running late, but one item a
      // turn in any case while a slot is left (api-first.ts).
      const free = startable({
        concurrency: this.lane.concurrency,
        slots: ctx.apiFirst.slots(this.lane.concurrency),
        running: this.running.size,
        msSinceStart: performance.now() - this.lastStartAt,
      });
      let claimed = 0;
      if (free > 0) {
        // Claims at least GATHER_MS apart: each item that ends wakes the lane, and with thousands of
        // items coming due one at a time (upstream polls) every wake paid a claim statement for one
        // item, most of a poll's CPU (bench/profiles.ts: 1,143 -> about 1,600 polls/s).
        const gather = this.lastClaimAt + GATHER_MS - performance.now();
        if (gather > 0) await new Promise((r) => setTimeout(r, gather));
        if (this.stopped) break;
        this.lastClaimAt = performance.now();
        try {
          claimed = this.startAll(await this.worker.claimNow(this.scope(this.accountCap), free)).length;
        } catch (error) {
          ctx.log.error({ err: error, lane: this.lane.name }, 'worker pass failed');
        }
      }
      if (this.stopped) break;
      // A partial batch under a stream of new work: let the next few arrive, so that one claim
      // statement takes several items instead of one each (bench/README.md, worker batching).
      if (claimed > 0 && claimed < free) await new Promise((r) => setTimeout(r, GATHER_MS));
      else if (free <= 0 || claimed === 0)
        await this.sleep(
          free <= 0 ? ctx.config.workerIdleMs : await this.msUntilNextDue().catch(() => ctx.config.workerIdleMs),
        );
    }
    await Promise.all(this.running);
  }

  /** Runs the items in the background; each frees its slot and wakes the lanes when it ends. */
  private startAll(items: WorkItem[]): WorkItem[] {
    this.worker.context.apiFirst.itemsStarted(items.length);
    if (items.length > 0) this.lastStartAt = performance.now();
    for (const item of items) {
      const running: Promise<void> = this.worker
        .process(item)
        .catch((error) => this.worker.context.log.error({ err: error, item: item.id }, 'work item bookkeeping failed'))
        .finally(() => {
          this.running.delete(running);
          this.wake(); // a slot is free, and the item may have made new work due in this lane (a poll)
          this.worker.wakeSoon(); // or in another (a resolved task's deliveries)
        });
      this.running.add(running);
    }
    return items;
  }

  private sleep(ms: number): Promise<void> {
    if (this.wokenEarly) {
      this.wokenEarly = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.wakeUp = () => {
        clearTimeout(this.timer);
        this.wakeUp = undefined;
        resolve();
      };
      this.timer = setTimeout(() => this.wakeUp?.(), Math.max(0, ms));
    });
  }

  /** Until the lane's next claimable item is due, at most workerIdleMs. */
  private async msUntilNextDue(): Promise<number> {
    const ctx = this.worker.context;
    const scope = this.scope(this.accountCap);
    const next = await nextDueAt(ctx.db, scope);
    const idle = ctx.config.workerIdleMs;
    return next === undefined ? idle : Math.min(idle, next - scope.now);
  }
}
