import type { ModelInfo } from '../../generated/catalogue.js';
import type { Context } from '../context.js';
import { ownerCooldowns } from './evidence.js';
import { healthRows } from './health-row.js';
import { ownerOf } from './task-owner.js';

/**
 * Whether a new task of this model and input, from this account, could be started now: undefined
 * when at least one deployment that routes it is open to the account (not cooling for everyone,
 * not cooling for the account's owner; a half-open one counts: its trial call may be this task's),
 * else the time the soonest of them opens again. The simulator never fails a call, so it is never
 * cooling. Read by admission (createTask, quote, retry, POST /v1/videos: ../http/cooling-refusal.ts),
 * which then answers 503 and holds nothing. The owner is looked up only when an owner's cool-down
 * is on record for one of the deployments.
 */
export async function allCoolingUntil(
  ctx: Context,
  model: ModelInfo,
  input: Record<string, unknown>,
  accountId: string,
): Promise<number | undefined> {
  const open = ctx.deployments.routesFor(model, input).filter((r) => r.deployment.isAvailable());
  // A deployment that cannot fail is never cooling: no read on the request path of the default setup.
  if (open.length === 0 || open.some((r) => r.deployment.inProcess)) return undefined;
  const names = [...new Set(open.map((r) => r.deployment.name))];
  const now = ctx.clock.now();
  const [rows, owners] = await Promise.all([
    healthRows(ctx.db.kysely, names),
    ownerCooldowns(ctx.db.kysely, names, now),
  ]);
  const ownerId = owners.size > 0 ? (await ownerOf(ctx.db.kysely, accountId)).ownerId : undefined;
  let soonest = Number.POSITIVE_INFINITY;
  for (const name of names) {
    const everyone = rows.get(name)?.cooldown_until;
    const mine = ownerId === undefined ? undefined : owners.get(name)?.get(ownerId);
    const until = Math.max(everyone != null && everyone > now ? everyone : 0, mine ?? 0);
    if (until <= now) return undefined;
    soonest = Math.min(soonest, until);
  }
  return soonest;
}
