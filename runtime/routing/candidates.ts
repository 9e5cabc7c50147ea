import type { Context } from '../context.js';
import { ownerCooldowns } from './evidence.js';
import { coolingForEveryone, inFlightCounts } from './health.js';
import { healthRows } from './health-row.js';
import type { Route } from './router.js';
import { ownerOf } from './task-owner.js';

/** The routes a task may be submitted on now, in order, and what the submit must know about them. */
export interface Candidates {
  /** Tiers by priority (highest first), each in a weighted random order. */
  order: Route[];
  /** Deployments with failures on record (a submit they answer ends the run). */
  failing: Set<string>;
  /** Half-open deployments among `order`: the submit must take the trial call first (./health.ts takeTrial). */
  trials: Set<string>;
  /** Whether every route was left out for a cool-down (for everyone, or for the task's owner). */
  allCooling: boolean;
}

/**
 * Routes in the order to try them for one account's task: deployments cooling for everyone, or
 * for the task's owner, and full ones left out; a half-open deployment stays in only for a paying,
 * non-playground owner (its trial call decides for everyone). Slots are only counted for
 * deployments with a maxInFlight.
 */
export async function routeCandidates(ctx: Context, routes: Route[], accountId: string): Promise<Candidates> {
  const names = routes.map((r) => r.deployment.name);
  const capped = names.filter((name) => ctx.deployments.maxInFlight(name) !== undefined);
  // A deployment in this process (the simulator) never fails a call: it has no health row to read.
  const recorded = routes.filter((r) => !r.deployment.inProcess).map((r) => r.deployment.name);
  const now = ctx.clock.now();
  const [health, inFlight, owners] = await Promise.all([
    healthRows(ctx.db.kysely, recorded),
    inFlightCounts(ctx.db.kysely, capped),
    ownerCooldowns(ctx.db.kysely, recorded, now),
  ]);
  const halfOpen = (name: string) => health.get(name)?.tripped_at != null && !coolingForEveryone(health.get(name), now);
  const owner = owners.size > 0 || recorded.some(halfOpen) ? await ownerOf(ctx.db.kysely, accountId) : undefined;
  const mayTry = owner?.countsGlobally === true || ctx.deployments.cooldown.singleTenant;
  const cooling = (r: Route) => {
    const name = r.deployment.name;
    if (coolingForEveryone(health.get(name), now)) return true;
    if (owner && (owners.get(name)?.get(owner.ownerId) ?? 0) > now) return true;
    return halfOpen(name) && !mayTry;
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
    trials: new Set(open.map((r) => r.deployment.name).filter(halfOpen)),
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
