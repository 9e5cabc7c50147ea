import type { Registry } from 'prom-client';
import type { Context } from '../context.js';
import { deploymentStates, type HealthState } from './health.js';
import { marginSums } from './margin.js';
import { FAILURE_CLASSES } from '../deployments/upstream-error.js';
import { COUNTERS, POLL_BUCKETS, readCounters } from './upstream-stats.js';

type Labels = Record<string, string | number>;
interface Value {
  labels: Labels;
  value: number;
  metricName?: string;
}

/** A metric whose values are read from the database at scrape time (prom-client asks `get`). */
function dbMetric(
  registry: Registry,
  name: string,
  help: string,
  type: 'gauge' | 'counter' | 'histogram',
  read: () => Promise<Value[]>,
): void {
  registry.registerMetric({
    name,
    help,
    type,
    aggregator: 'sum',
    get: async () => ({ name, help, type, aggregator: 'sum', values: await read() }),
    reset: () => {},
  } as unknown as Parameters<Registry['registerMetric']>[0]);
}

/**
 * Per deployment, read from the database so that every process reports the shared truth: tasks in
 * flight and the cap, cool-downs, submits, failures by class, poll latency (a histogram of the
 * totals every worker process adds, upstream_counters); per model and deployment, revenue and what
 * the operator pays the upstream, and of that what it pays for jobs no client was charged for (the
 * margin report's sums, all time).
 */
/** mediaforge_upstream_health's value of each state: higher is worse. */
const HEALTH_LEVEL: Record<HealthState, number> = { ok: 0, full: 0, degraded: 1, 'half-open': 2, cooling: 2, down: 3 };

export function registerUpstreamMetrics(registry: Registry, ctx: Context): void {
  const db = ctx.db.kysely;
  const counters = async () => {
    await ctx.upstreamStats.flush(); // this process's own counts of the last seconds
    return readCounters(db);
  };
  dbMetric(
    registry,
    'mediaforge_upstream_in_flight',
    'Tasks submitted to the deployment and not yet ended (all processes).',
    'gauge',
    async () =>
      (await deploymentStates(db, ctx.deployments, ctx.clock.now())).map((s) => ({
        labels: { deployment: s.name },
        value: s.inFlight,
      })),
  );
  dbMetric(
    registry,
    'mediaforge_upstream_max_in_flight',
    "The deployment's maxInFlight (absent: no cap).",
    'gauge',
    async () =>
      ctx.deployments.list().flatMap((d) => {
        const max = ctx.deployments.maxInFlight(d.name);
        return max === undefined ? [] : [{ labels: { deployment: d.name }, value: max }];
      }),
  );
  dbMetric(
    registry,
    'mediaforge_upstream_cooling',
    '1 while the deployment cools down after consecutive failed calls (cooling or down).',
    'gauge',
    async () =>
      (await deploymentStates(db, ctx.deployments, ctx.clock.now())).map((s) => ({
        labels: { deployment: s.name },
        value: s.coolingUntil !== null ? 1 : 0,
      })),
  );
  dbMetric(
    registry,
    'mediaforge_upstream_health',
    "The deployment's health: 0 ok or full, 1 degraded (its last call failed), 2 cooling, 3 down.",
    'gauge',
    async () =>
      (await deploymentStates(db, ctx.deployments, ctx.clock.now())).map((s) => ({
        labels: { deployment: s.name },
        value: HEALTH_LEVEL[s.state],
      })),
  );
  dbMetric(registry, 'mediaforge_upstream_submits', 'Submits sent to the deployment.', 'counter', async () => {
    const all = await counters();
    return ctx.deployments
      .list()
      .map((d) => ({ labels: { deployment: d.name }, value: all.get(d.name)?.get(COUNTERS.submits) ?? 0 }));
  });
  dbMetric(
    registry,
    'mediaforge_upstream_failures',
    'Failed calls to the deployment by class (unreachable, busy, server, unauthorized, configuration, rejected, ambiguous, lost, protocol).',
    'counter',
    async () => {
      const all = await counters();
      return ctx.deployments.list().flatMap((d) =>
        FAILURE_CLASSES.map((failure) => ({
          labels: { deployment: d.name, class: failure },
          value: all.get(d.name)?.get(COUNTERS.failure(failure)) ?? 0,
        })),
      );
    },
  );
  dbMetric(
    registry,
    'mediaforge_upstream_poll_duration_seconds',
    'Latency of status polls of the deployment.',
    'histogram',
    async () => {
      const all = await counters();
      return ctx.deployments.list().flatMap((d) => {
        const of = all.get(d.name) ?? new Map<string, number>();
        let cumulative = 0;
        const buckets = [...POLL_BUCKETS, '+Inf' as const].map((le) => {
          cumulative += of.get(COUNTERS.pollBucket(le)) ?? 0;
          return {
            labels: { deployment: d.name, le },
            value: cumulative,
            metricName: 'mediaforge_upstream_poll_duration_seconds_bucket',
          };
        });
        return [
          ...buckets,
          {
            labels: { deployment: d.name },
            value: (of.get(COUNTERS.pollMillis) ?? 0) / 1000,
            metricName: 'mediaforge_upstream_poll_duration_seconds_sum',
          },
          {
            labels: { deployment: d.name },
            value: of.get(COUNTERS.polls) ?? 0,
            metricName: 'mediaforge_upstream_poll_duration_seconds_count',
          },
        ];
      });
    },
  );
  const margin = () => marginSums(db);
  dbMetric(
    registry,
    'mediaforge_revenue_usd',
    'What callers were charged for tasks that ended, by model and deployment (USD).',
    'gauge',
    async () =>
      (await margin()).map((m) => ({
        labels: { model: m.model, deployment: m.deployment },
        value: m.sums.revenueCredits / 100,
      })),
  );
  dbMetric(
    registry,
    'mediaforge_upstream_cost_usd',
    'What the operator pays the upstream for tasks that ended (declared costs), by model and deployment (USD).',
    'gauge',
    async () =>
      (await margin()).map((m) => ({
        labels: { model: m.model, deployment: m.deployment },
        value: m.sums.costMicros / 1_000_000,
      })),
  );
  dbMetric(
    registry,
    'mediaforge_upstream_abandoned_cost_usd',
    'What the operator pays the upstream for completed jobs no client was charged for (tasks that expired, were canceled or failed meanwhile; part of mediaforge_upstream_cost_usd), by model and deployment (USD).',
    'gauge',
    async () =>
      (await margin()).map((m) => ({
        labels: { model: m.model, deployment: m.deployment },
        value: m.sums.abandonedMicros / 1_000_000,
      })),
  );
  dbMetric(
    registry,
    'mediaforge_upstream_possibly_abandoned_cost_usd',
    'The declared cost of jobs that submits with an unknown outcome, on protocols without an idempotency key, may have made and that are not yet found and reconciled nor found absent (not part of mediaforge_upstream_cost_usd), by model and deployment (USD).',
    'gauge',
    async () =>
      (await margin()).map((m) => ({
        labels: { model: m.model, deployment: m.deployment },
        value: m.sums.possiblyAbandonedMicros / 1_000_000,
      })),
  );
}
