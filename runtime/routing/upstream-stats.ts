import { sql } from 'kysely';
import type { Db } from '../storage/dialect.js';
import type { FailureClass } from '../deployments/upstream-error.js';

/** Upper bounds (seconds) of the poll latency buckets; the last bucket is +Inf. */
export const POLL_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** How often a process adds what it counted to the shared totals. */
const FLUSH_MS = 2000;

/** Counter names of upstream_counters. */
export const COUNTERS = {
  submits: 'submits',
  failure: (failure: FailureClass) => `failures.${failure}`,
  polls: 'polls',
  pollMillis: 'poll_ms_sum',
  pollBucket: (le: number | '+Inf') => `poll_le.${le}`,
} as const;

/**
 * What one process counted about its deployments since its last flush. The totals live in the
 * database (upstream_counters), so /metrics on any API process shows the work of every worker
 * process; a process adds its counts every two seconds and when it stops (a crash loses at most
 * those two seconds of counts, never a task).
 */
export class UpstreamStats {
  private pending = new Map<string, number>();
  private timer?: NodeJS.Timeout;
  private flushing?: Promise<void>;

  constructor(private readonly db: Db) {}

  count(deployment: string, counter: string, n = 1): void {
    const key = `${deployment}\u0000${counter}`;
    this.pending.set(key, (this.pending.get(key) ?? 0) + n);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, FLUSH_MS).unref();
  }

  submitted(deployment: string): void {
    this.count(deployment, COUNTERS.submits);
  }

  failed(deployment: string, failure: FailureClass): void {
    this.count(deployment, COUNTERS.failure(failure));
  }

  /** One poll's latency: its bucket (non-cumulative; /metrics adds them up), the count and the sum. */
  polled(deployment: string, ms: number): void {
    const le = POLL_BUCKETS.find((b) => ms <= b * 1000) ?? '+Inf';
    this.count(deployment, COUNTERS.polls);
    this.count(deployment, COUNTERS.pollMillis, Math.round(ms));
    this.count(deployment, COUNTERS.pollBucket(le));
  }

  /** Adds the pending counts to the totals, one upsert each; a flush already under way is waited for (its counts are then in). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    clearTimeout(this.timer);
    this.timer = undefined;
    this.flushing = (async () => {
      for (const [key, n] of batch) {
        const [name, counter] = key.split('\u0000');
        await this.db.kysely
          .insertInto('upstream_counters')
          .values({ name, counter, value: n })
          .onConflict((oc) =>
            oc.columns(['name', 'counter']).doUpdateSet({ value: sql`upstream_counters.value + ${n}` }),
          )
          .execute()
          .catch(() => undefined); // counts are best effort: a closed database at shutdown loses them, nothing else
      }
    })().finally(() => (this.flushing = undefined));
    await this.flushing;
  }
}

/** The totals of every deployment: counter -> value, by deployment name. */
export async function readCounters(db: Db['kysely']): Promise<Map<string, Map<string, number>>> {
  const rows = await db.selectFrom('upstream_counters').selectAll().execute();
  const out = new Map<string, Map<string, number>>();
  for (const row of rows) {
    const of = out.get(row.name) ?? new Map<string, number>();
    of.set(row.counter, Number(row.value));
    out.set(row.name, of);
  }
  return out;
}
