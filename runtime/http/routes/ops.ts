import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Context } from '../../context.js';
import { ApiError } from '../../errors.js';
import { deploymentStates } from '../../routing/health.js';
import { pendingMigrations } from '../../storage/migrate.js';
import { createOpsMetrics } from '../ops-metrics.js';
import { operatorCheck } from '../operator-access.js';

/**
 * Operations endpoints, outside the API contract: /healthz (the process is up), /readyz (the
 * database answers and its migrations are current; the operator also sees each deployment's
 * state) and /metrics (Prometheus text format, runtime/http/ops-metrics.ts).
 * /metrics and the detail of /readyz (deployments and their failures, pending migrations, the
 * database's error text) are the operator's: with MEDIAFORGE_METRICS_TOKEN set they need it as a
 * Bearer token, without it they answer loopback callers only (operator-access.ts); /healthz and
 * /readyz's bare status stay open to everyone, for load balancers.
 */
export function registerOps(app: FastifyInstance, ctx: Context): void {
  const operator = operatorCheck(ctx.config.metricsToken, ctx.config.trustedProxies.length > 0);
  const { registry, latency, requests } = createOpsMetrics(ctx);
  const db = ctx.db.kysely;

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
