import { sql, type Selectable } from 'kysely';
import type { Context } from '../context.js';
import { faultPoint } from '../faults.js';
import { newId } from '../ids.js';
import type { Database } from '../storage/schema.js';

/** Pause after a partial batch: a few milliseconds of latency for far fewer claim statements. */
const GATHER_MS = 10;

export type WorkItem = Selectable<Database['work_items']>;
/** What a handler wants done with its item: finished, or tried again at a later time. */
export type WorkOutcome = { done: true } | { retryAt: number };
export type WorkHandler = (ctx: Context, item: WorkItem) => Promise<WorkOutcome>;

/**
 * Claims due work items with a lease and runs them. Work lives in the database, so a worker that
 * dies loses its lease and another takes the item over; handlers make their effect happen once.
 */
export class Worker {
  readonly owner = newId('worker', 6);
  private stopped = true;
  private timer?: NodeJS.Timeout;
  private wakeUp?: () => void;
  private loop?: Promise<void>;
  private readonly running = new Set<Promise<void>>();
  private wokenEarly = false;

  constructor(
    private readonly ctx: Context,
    private readonly handlers: Record<string, WorkHandler>,
  ) {}

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

  /** New work is due or a slot is free: stop sleeping (or skip the next sleep, if not asleep now). */
  wake(): void {
    if (this.wakeUp) this.wakeUp();
    else this.wokenEarly = true;
  }

  /**
   * Keeps up to workerConcurrency items in flight: a free slot is filled by the next claim, so one
   * slow item (a receiver that drips, a deployment call that hangs until its time box) holds one
   * slot, not the whole pass.
   */
  private async run(): Promise<void> {
    while (!this.stopped) {
      const free = this.ctx.config.workerConcurrency - this.running.size;
      let claimed = 0;
      if (free > 0) {
        try {
          claimed = this.startAll(await this.claimNow(free)).length;
        } catch (error) {
          this.ctx.log.error({ err: error }, 'worker pass failed');
        }
      }
      if (this.stopped) break;
      // A partial batch under a stream of new work: let the next few arrive, so that one claim
      // statement takes several items instead of one each (bench/README.md, worker batching).
      if (claimed > 0 && claimed < free) await new Promise((r) => setTimeout(r, GATHER_MS));
      else if (free <= 0 || claimed === 0) await this.sleep(free <= 0 ? this.ctx.config.workerIdleMs : await this.msUntilNextDue().catch(() => this.ctx.config.workerIdleMs));
    }
    await Promise.all(this.running);
  }

  /** Runs the items in the background; each frees its slot and wakes the loop when it ends. */
  private startAll(items: WorkItem[]): WorkItem[] {
    for (const item of items) {
      const running: Promise<void> = this.process(item)
        .catch((error) => this.ctx.log.error({ err: error, item: item.id }, 'work item bookkeeping failed'))
        .finally(() => {
          this.running.delete(running);
          this.wake(); // a slot is free, and the item may have made new work due (a poll, deliveries)
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

  /**
   * Until the next unleased item is due (the index gives it in order). Items under a lease are left
   * out: this worker's own wake the loop when they end, and a dead worker's lease is noticed within
   * workerIdleMs. Counting them would spin the loop while an item is in flight.
   */
  private async msUntilNextDue(): Promise<number> {
    const now = this.ctx.clock.now();
    const row = await this.ctx.db.kysely
      .selectFrom('work_items')
      .select('due_at')
      .where('done_at', 'is', null)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
      .orderBy('due_at')
      .limit(1)
      .executeTakeFirst();
    const next = row === undefined ? undefined : Number(row.due_at);
    const idle = this.ctx.config.workerIdleMs;
    return next === undefined ? idle : Math.min(idle, next - now);
  }

  /** Claims and runs every item due now (up to the concurrency), waiting for them; returns how many ran. Tests drive the worker with it. */
  async runOnce(): Promise<number> {
    const items = await this.claimNow(this.ctx.config.workerConcurrency);
    await Promise.all(items.map((item) => this.process(item)));
    return items.length;
  }

  private async claimNow(limit: number): Promise<WorkItem[]> {
    const items = await this.claim(limit);
    if (items.length > 0) faultPoint('worker.claimed'); // leases taken, nothing run: they must run out and be taken again
    return items;
  }

  /**
   * One statement takes the leases of up to `limit` due items and returns them. On PostgreSQL rows
   * another worker is claiming are skipped, not waited for; SQLite runs the statement under its
   * write lock, so two processes on one file never take the same item either.
   */
  private async claim(limit: number): Promise<WorkItem[]> {
    const now = this.ctx.clock.now();
    const leaseUntil = now + this.ctx.config.leaseMs;
    const skipLocked = this.ctx.db.engine === 'postgres' ? sql`FOR UPDATE SKIP LOCKED` : sql``;
    const { rows } = await sql<WorkItem>`
      UPDATE work_items SET lease_owner = ${this.owner}, lease_until = ${leaseUntil}, attempts = attempts + 1
      WHERE id IN (
        SELECT id FROM work_items
        WHERE done_at IS NULL AND due_at <= ${now} AND (lease_until IS NULL OR lease_until < ${now})
        ORDER BY due_at LIMIT ${limit}
        ${skipLocked})
      RETURNING *`.execute(this.ctx.db.kysely);
    return rows;
  }

  private async process(item: WorkItem): Promise<void> {
    const handler = this.handlers[item.kind];
    let outcome: WorkOutcome;
    try {
      if (!handler) throw new Error(`no handler for work kind ${item.kind}`);
      outcome = await handler(this.ctx, item);
    } catch (error) {
      this.ctx.log.error({ err: error, item: item.id, kind: item.kind }, 'work item failed; retrying');
      outcome = { retryAt: this.ctx.clock.now() + Math.min(60_000, 1000 * 2 ** Math.min(item.attempts, 6)) };
    }
    faultPoint('worker.handled'); // the handler's effect is done, the item not yet marked: it runs again
    const db = this.ctx.db.kysely;
    const owned = db.updateTable('work_items').where('id', '=', item.id).where('lease_owner', '=', this.owner);
    if ('done' in outcome) await owned.set({ done_at: this.ctx.clock.now(), lease_until: null }).execute();
    else await owned.set({ due_at: outcome.retryAt, lease_owner: null, lease_until: null }).execute();
  }
}
