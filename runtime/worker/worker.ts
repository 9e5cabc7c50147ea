import { sql, type Selectable } from 'kysely';
import type { Context } from '../context.js';
import { newId } from '../ids.js';
import type { Database } from '../storage/schema.js';

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

  /** New work is due: stop sleeping. */
  wake(): void {
    this.wakeUp?.();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let processed = 0;
      try {
        processed = await this.runOnce();
      } catch (error) {
        this.ctx.log.error({ err: error }, 'worker pass failed');
      }
      if (processed > 0 || this.stopped) continue;
      await this.sleep(await this.msUntilNextDue().catch(() => this.ctx.config.workerIdleMs));
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.wakeUp = () => {
        clearTimeout(this.timer);
        this.wakeUp = undefined;
        resolve();
      };
      this.timer = setTimeout(() => this.wakeUp?.(), Math.max(0, ms));
    });
  }

  private async msUntilNextDue(): Promise<number> {
    const row = await this.ctx.db.kysely.selectFrom('work_items').select((eb) => eb.fn.min('due_at').as('next')).where('done_at', 'is', null).executeTakeFirst();
    const next = row?.next === null || row?.next === undefined ? undefined : Number(row.next);
    const idle = this.ctx.config.workerIdleMs;
    return next === undefined ? idle : Math.min(idle, next - this.ctx.clock.now());
  }

  /** Claims and runs every item due now (up to the concurrency); returns how many ran. */
  async runOnce(): Promise<number> {
    const items = await this.claim(this.ctx.config.workerConcurrency);
    await Promise.all(items.map((item) => this.process(item)));
    return items.length;
  }

  private async claim(limit: number): Promise<WorkItem[]> {
    const now = this.ctx.clock.now();
    const leaseUntil = now + this.ctx.config.leaseMs;
    return this.ctx.db.engine === 'postgres' ? this.claimSkipLocked(limit, now, leaseUntil) : this.claimOptimistic(limit, now, leaseUntil);
  }

  /** PostgreSQL: one statement; rows another worker is claiming are skipped, not waited for. */
  private async claimSkipLocked(limit: number, now: number, leaseUntil: number): Promise<WorkItem[]> {
    const { rows } = await sql<WorkItem>`
      UPDATE work_items SET lease_owner = ${this.owner}, lease_until = ${leaseUntil}, attempts = attempts + 1
      WHERE id IN (
        SELECT id FROM work_items
        WHERE done_at IS NULL AND due_at <= ${now} AND (lease_until IS NULL OR lease_until < ${now})
        ORDER BY due_at LIMIT ${limit}
        FOR UPDATE SKIP LOCKED)
      RETURNING *`.execute(this.ctx.db.kysely);
    return rows;
  }

  /** SQLite (one process): select due items, then take each lease only if it is still free. */
  private async claimOptimistic(limit: number, now: number, leaseUntil: number): Promise<WorkItem[]> {
    const db = this.ctx.db.kysely;
    const candidates = await db
      .selectFrom('work_items')
      .select('id')
      .where('done_at', 'is', null)
      .where('due_at', '<=', now)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
      .orderBy('due_at')
      .limit(limit)
      .execute();
    const claimed: WorkItem[] = [];
    for (const { id } of candidates) {
      const row = await db
        .updateTable('work_items')
        .set((eb) => ({ lease_owner: this.owner, lease_until: leaseUntil, attempts: eb('attempts', '+', 1) }))
        .where('id', '=', id)
        .where('done_at', 'is', null)
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
        .returningAll()
        .executeTakeFirst();
      if (row) claimed.push(row);
    }
    return claimed;
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
    const db = this.ctx.db.kysely;
    const owned = db.updateTable('work_items').where('id', '=', item.id).where('lease_owner', '=', this.owner);
    if ('done' in outcome) await owned.set({ done_at: this.ctx.clock.now(), lease_until: null }).execute();
    else await owned.set({ due_at: outcome.retryAt, lease_owner: null, lease_until: null }).execute();
  }
}
