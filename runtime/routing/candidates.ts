import type { Context } from '../context.js';
import { healthRows, inFlightCounts } from './health.js';
import type { Route } from './router.js';

/**
 * Routes in the order to try them: tiers by priority (highest first), each in a weighted random
 * order; cooling and full deployments left out. Also the deployments with failures on record (a
 * submit they answer ends the run), and whether every route was left out for its cool-down.
 * Slots are only counted for deployments with a maxInFlight.
 */
export async function routeCandidates(
  ctx: Context,
  routes: Route[],
): Promise<{ order: Route[]; failing: Set<string>; allCooling: boolean }> {
  const names = routes.map((r) => r.deployment.name);
  const capped = names.filter((name) => ctx.deployments.maxInFlight(name) !== undefined);
  // A deployment in this process (the simulator) never fails a call: it has no health row to read.
  const recorded = routes.filter((r) => !r.deployment.inProcess).map((r) => r.deployment.name);
  const now = ctx.clock.now();
  const [health, inFlight] = await Promise.all([
    healthRows(ctx.db.kysely, recorded),
    inFlightCounts(ctx.db.kysely, capped),
  ]);
  const cooling = (r: Route) => {
    const until = health.get(r.deployment.name)?.cooldown_until;
    return until != null && until > now;
  };
  const open = routes.filter((r) => {
    const max = ctx.deployments.maxInFlight(r.deployment.name);
    return !cooling(r) && !(max !== undefined && (inFlight.get(r.deployment.name) ?? 0) >= max);
  });
  const tiers = [...new Set(open.map((r) => r.priority))].sort((a, b) => b - a);
  const failing = new Set([...health.values()].filter((row) => row.consecutive_failures > 0).map((row) => row.name));
  return {
    order: tiers.flatMap((priority) => weightedOrder(open.filter((r) => r.priority === priority))),
    failing,
    allCooling: routes.length > 0 && routes.every(cooling),
  };
}

/** A weighted random permutation: each next route drawn with probability weight / remaining weight. */
export function weightedOrder(routes: Route[]): Route[] {
  const left = [...routes];
  const order: Route[] = [];
  while (left.length) {
    const total = left.reduce((sum, r) => sum + r.weight, 0);
    let draw = Math.random() * total;
    const index = left.findIndex((r) => (draw -= r.weight) < 0);
    order.push(...left.splice(index < 0 ? left.length - 1 : index, 1));
  }
  return order;
}
