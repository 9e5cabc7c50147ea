import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Context } from '../context.js';
import { ApiError } from '../errors.js';
import { deploymentStates } from '../routing/health.js';
import { totalHeldCredits } from '../ledger/wallets.js';
import { registerUpstreamMetrics } from '../routing/upstream-metrics.js';
import { pendingMigrations } from '../storage/migrate.js';
import { taskCountsByState } from '../tasks/task-rows.js';
import { operatorCheck } from './operator-access.js';

/**
 * Operations endpoints, outside the API contract: /healthz (the process is up), /readyz (the
 * database answers and its migrations are current; the operator also sees each deployment's
 * state) and /metrics (Prometheus text format).
 * Gauges are read from the database at scrape time, so every process reports the shared truth.
 * /metrics and the detail of /readyz (deployments and their failures, pending migrations, the
 * database's error text) are the operator's: with MEDIAFORGE_METRICS_TOKEN set they need it as a
 * Bearer token, without it they answer loopback callers only (operator-access.ts); /healthz and
 * /readyz's bare status stay open to everyone, for load balancers.
 */
export function registerOps(app: FastifyInstance, ctx: Context): void {
  const operator = operatorCheck(ctx.config.metricsToken, ctx.config.trustedProxies.length > 0);
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
      this.set(await totalHeldCredits(db));
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
      const row = await db
        .selectFrom('work_items')
        .select((eb) => eb.fn.min<number>('due_at').as('oldest'))
        .where('done_at', 'is', null)
        .where('due_at', '<=', now)
        .executeTakeFirst();
      this.set(row?.oldest ? Math.max(0, now - Number(row.oldest)) / 1000 : 0);
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

  app.addHook('onResponse', async (request, reply) => {
    const labels = {
      route: request.routeOptions.url ?? 'unmatched',
      method: request.method,
      status: String(reply.statusCode),
    };
    latency.observe(labels, reply.elapsedTime / 1000);
    requests.inc(labels);
  });

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (request, reply) => {
    const detail = operator(request);
    try {
      await sql`SELECT 1`.execute(db);
      const pending = await pendingMigrations(ctx.db);
      if (pending.length)
        return reply.status(503).send({ status: 'not ready', ...(detail ? { pendingMigrations: pending } : {}) });
      // Ready as a process: a deployment cooling down or full is the upstream's state, shown to the operator, not a reason to take this process out.
      return {
        status: 'ready',
        ...(detail ? { deployments: await deploymentStates(db, ctx.deployments, ctx.clock.now()) } : {}),
      };
    } catch (error) {
      return reply.status(503).send({ status: 'not ready', ...(detail ? { error: (error as Error).message } : {}) });
    }
  });
  app.get('/metrics', async (request, reply) => {
    if (!operator(request)) throw new ApiError('unauthorized');
    return reply.type(registry.contentType).send(await registry.metrics());
  });
}
