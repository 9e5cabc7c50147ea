import type { Context } from '../context.js';
import { renewLease, type WorkItem } from './claim.js';

/** Why an item's handler was told to stop: what the worker does with the item afterwards depends on it. */
export type AbortCause = 'lease-lost' | 'shutdown';

/** The reason an item's signal carries: `cause` says which. */
export class ItemAborted extends Error {
  constructor(readonly why: AbortCause) {
    super(why === 'shutdown' ? 'the worker is shutting down' : 'another worker took the lease over');
    this.name = 'ItemAborted';
  }
}

/**
 * Keeps the lease of a running item alive: every third of the lease it is moved a whole lease
 * ahead, so an item that takes longer than a lease (a result that downloads for minutes) is not
 * taken over and run a second time meanwhile, and its account's count in the claim stays right.
 * When a renewal finds the item no longer this worker's (the process was stalled past its lease
 * and another worker took it), the handler's signal is aborted: one run of the item goes on.
 */
export class LeaseHeartbeat {
  private readonly timer: NodeJS.Timeout;
  private renewing = false;

  constructor(
    private readonly ctx: Context,
    private readonly item: WorkItem,
    private readonly owner: string,
    private readonly abort: (cause: AbortCause) => void,
  ) {
    this.timer = setInterval(() => void this.beat(), Math.max(10, Math.floor(ctx.config.leaseMs / 3)));
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async beat(): Promise<void> {
    if (this.renewing) return; // a slow database: one renewal at a time
    this.renewing = true;
    try {
      const held = await renewLease(
        this.ctx.db,
        this.item.id,
        this.owner,
        this.ctx.clock.now() + this.ctx.config.leaseMs,
      );
      if (!held) {
        this.stop();
        this.ctx.log.warn(
          { item: this.item.id, kind: this.item.kind },
          'the lease was taken over; the item is aborted',
        );
        this.abort('lease-lost');
      }
    } catch (error) {
      // The next beat tries again; the lease has two more thirds to run.
      this.ctx.log.warn({ err: error, item: this.item.id }, 'the lease could not be renewed');
    } finally {
      this.renewing = false;
    }
  }
}
