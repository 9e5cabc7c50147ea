import type { ModelInfo } from '../../generated/catalogue.js';
import type { Context } from '../context.js';
import { healthRows } from './health.js';

/**
 * Whether a new task of this model and input could be started now: undefined when at least one
 * deployment that routes it is not cooling down (a `down` deployment whose cool-down ended counts:
 * the next submit tries it), else the time the soonest of them leaves its cool-down. The simulator
 * never fails a call, so it is never cooling. Read by admission (createTask, quote, POST
 * /v1/videos: runtime/http/fail-fast.ts), which then answers 503 and holds nothing.
 */
export async function allCoolingUntil(
  ctx: Context,
  model: ModelInfo,
  input: Record<string, unknown>,
): Promise<number | undefined> {
  const open = ctx.deployments.routesFor(model, input).filter((r) => r.deployment.isAvailable());
  // A deployment that cannot fail is never cooling: no read on the request path of the default setup.
  if (open.length === 0 || open.some((r) => r.deployment.inProcess)) return undefined;
  const names = [...new Set(open.map((r) => r.deployment.name))];
  const now = ctx.clock.now();
  const rows = await healthRows(ctx.db.kysely, names);
  let soonest = Number.POSITIVE_INFINITY;
  for (const name of names) {
    const until = rows.get(name)?.cooldown_until;
    if (until == null || until <= now) return undefined;
    soonest = Math.min(soonest, until);
  }
  return soonest;
}
