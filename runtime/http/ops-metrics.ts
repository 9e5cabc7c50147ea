import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Context } from '../context.js';
import { referenceCopyTotals } from '../assets/reference-copies.js';
import { oldestDueAt } from '../queue/work-items.js';
import { registerUpstreamMetrics } from '../routing/upstream-metrics.js';
import { taskCountsByState } from '../tasks/task-rows.js';

/** The registry /metrics answers from, and the two HTTP series every answer feeds (runtime/http/routes/ops.ts). */
export interface OpsMetrics {
  registry: Registry;
  latency: Histogram<'route' | 'method' | 'status'>;
  requests: Counter<'route' | 'method' | 'status'>;
}

/**
 * The service's Prometheus series. Gauges are read from the database at scrape time, so every
 * process reports the shared truth.
 */
export function createOpsMetrics(ctx: Context): OpsMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const db = ctx.db.kysely;

  new Gauge({
    name: 'mediaforge_tasks',
    help: 'Tasks by state.',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const row of await taskCountsByState(db)) this.set({ state: row.state }, row.count);
    },
  });
  new Gauge({
    name: 'mediaforge_held_credits',
    help: 'Credits held by open holds, over all accounts.',
    registers: [registry],
    async collect() {
      this.set(await ctx.ledger.totalHeld(db));
    },
  });
  new Gauge({
    name: 'mediaforge_webhook_deliveries',
    help: 'Webhook deliveries by outcome.',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      this.reset();
      const rows = await db
        .selectFrom('webhook_deliveries')
        .select(['state', (eb) => eb.fn.countAll<number>().as('n')])
        .groupBy('state')
        .execute();
      for (const row of rows) this.set({ state: row.state }, Number(row.n));
    },
  });
  new Gauge({
    name: 'mediaforge_queue_lag_seconds',
    help: 'Age of the oldest work item that is due and not done (0 when none).',
    registers: [registry],
    async collect() {
      const now = ctx.clock.now();
      const oldest = await oldestDueAt(db, now);
      this.set(oldest === undefined ? 0 : Math.max(0, now - oldest) / 1000);
    },
  });
  new Gauge({
    name: 'mediaforge_reference_copies',
    help: "The service's stored copies of customers' reference files (issue 37 point 3), by measure: copies and bytes; they go with each task's purge.",
    labelNames: ['measure'],
    registers: [registry],
    async collect() {
      const totals = await referenceCopyTotals(db);
      this.set({ measure: 'copies' }, totals.copies);
      this.set({ measure: 'bytes' }, totals.bytes);
    },
  });
  registerUpstreamMetrics(registry, ctx);
  const latency = new Histogram({
    name: 'mediaforge_http_request_duration_seconds',
    help: 'HTTP request latency by route and status.',
    labelNames: ['route', 'method', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const requests = new Counter({
    name: 'mediaforge_http_requests_total',
    help: 'HTTP requests by route and status.',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
  });

  return { registry, latency, requests };
}
