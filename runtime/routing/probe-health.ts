import type { Context } from '../context.js';
import type { ProbeResult } from '../deployments/deployment.js';
import type { WorkHandler } from '../queue/work-handler.js';
import { DOWN_AFTER_TRIPS, ensureRow, healthRows, recover } from './health-row.js';
import { ownerCooldowns, sweepEvidence } from './evidence.js';

/**
 * The probe as evidence: a request that creates nothing, made by the service itself, so its
 * failure is no customer's doing. A failed probe makes the deployment `down` for everyone until the
 * next probe (a key refused at start is `down` before any customer is let through); an answered
 * probe recovers it, and recovers a deployment tripped by customers' evidence once that cool-down
 * has run its length (the probe is then the half-open trial call, made by no customer). While anything cools on a deployment (for everyone,
 * or for an owner) or its last probe failed, it is probed again every `cooldown.probeSeconds`, so
 * recovery does not wait for a customer's task.
 */

/** Records a probe's outcome on the deployment's health. A 429 says nothing either way (the upstream pacing its callers). */
export async function recordProbe(ctx: Context, name: string, probe: ProbeResult): Promise<void> {
  const now = ctx.clock.now();
  await ensureRow(ctx.db.kysely, name, now);
  // Nothing was asked (a profile without a probe), or the upstream paced its callers: it says nothing either way.
  if (probe.outcome === 'not probed' || probe.status === 429) {
    await ctx.db.kysely
      .updateTable('upstream_health')
      .set({
        probed_at: now,
        probe_outcome: probe.outcome === 'not probed' ? probe.outcome : 'busy',
        probe_detail: probe.detail.slice(0, 300),
      })
      .where('name', '=', name)
      .execute();
    return;
  }
  if (probe.ok) {
    const before = await ctx.db.kysely
      .selectFrom('upstream_health')
      .select(['probe_outcome', 'cooldown_until'])
      .where('name', '=', name)
      .executeTakeFirstOrThrow();
    await ctx.db.kysely
      .updateTable('upstream_health')
      .set({ probed_at: now, probe_outcome: 'ok', probe_detail: probe.detail.slice(0, 300) })
      .where('name', '=', name)
      .execute();
    // It recovers what a probe found (its failed probe made it down), or what customers' evidence
    // found once that cool-down has run its length (the probe is then the half-open trial): a probe
    // that answers while customers' calls fail must not cut their cool-down short.
    const probeFound = before.probe_outcome != null && !['ok', 'busy', 'not probed'].includes(before.probe_outcome);
    if (probeFound || before.cooldown_until == null || before.cooldown_until <= now) await recover(ctx, name, 'probe');
    return;
  }
  await ctx.db.kysely
    .updateTable('upstream_health')
    .set((eb) => ({
      probed_at: now,
      probe_outcome: probe.outcome,
      probe_detail: probe.detail.slice(0, 300),
      cooldown_until: now + ctx.deployments.cooldown.probeMs,
      tripped_at: eb.fn.coalesce('tripped_at', eb.val(now)),
      trips: eb.case().when('trips', '<', DOWN_AFTER_TRIPS).then(DOWN_AFTER_TRIPS).else(eb.ref('trips')).end(),
      trial_until: null,
      updated_at: now,
    }))
    .where('name', '=', name)
    .execute();
}

/** The least time between two probes of one deployment, whatever asks for them. */
const PROBE_GAP_MS = 5000;

/**
 * Probes the deployment in the background, unless some process probed it in the last few seconds
 * (the claim is one conditional write, so processes do not probe it together). Asked when a call
 * fails in a way no customer's request can cause (nothing listening, the key refused, a wrong path).
 */
export function probeSoon(ctx: Context, name: string): void {
  const deployment = ctx.deployments.byName(name);
  if (!deployment?.probe) return;
  void probeClaimed(ctx, name).catch((error) =>
    ctx.log.warn({ err: error, deployment: name }, 'upstream probe failed'),
  );
}

async function probeClaimed(ctx: Context, name: string): Promise<boolean> {
  const deployment = ctx.deployments.byName(name);
  if (!deployment?.probe) return false;
  const now = ctx.clock.now();
  await ensureRow(ctx.db.kysely, name, now);
  const claimed = await ctx.db.kysely
    .updateTable('upstream_health')
    .set({ probed_at: now })
    .where('name', '=', name)
    .where((eb) => eb.or([eb('probed_at', 'is', null), eb('probed_at', '<=', now - PROBE_GAP_MS)]))
    .executeTakeFirst();
  if (Number(claimed.numUpdatedRows) !== 1) return false;
  await recordProbe(ctx, name, await deployment.probe(ctx.deployments.upstreamModelsAt(name)[0]));
  return true;
}

/**
 * The recurring `watch-upstreams` item: probes again every deployment with a probe that cools (for
 * everyone or for an owner) or whose last probe failed, once its last probe is `probeSeconds` old;
 * and sweeps evidence that no longer counts.
 */
export const watchUpstreams: WorkHandler = async (ctx) => {
  const { probeMs } = ctx.deployments.cooldown;
  const now = ctx.clock.now();
  const probed = ctx.deployments.list().filter((d) => d.probe);
  const names = probed.map((d) => d.name);
  const [rows, owners] = await Promise.all([
    healthRows(ctx.db.kysely, names),
    ownerCooldowns(ctx.db.kysely, names, now),
  ]);
  await Promise.all(
    names.map(async (name) => {
      const row = rows.get(name);
      const unwell =
        row?.tripped_at != null ||
        (row?.probe_outcome != null && !['ok', 'busy', 'not probed'].includes(row.probe_outcome)) ||
        (owners.get(name)?.size ?? 0) > 0;
      if (!unwell || (row?.probed_at != null && row.probed_at > now - probeMs)) return;
      try {
        await probeClaimed(ctx, name);
      } catch (error) {
        ctx.log.warn({ err: error, deployment: name }, 'upstream probe failed');
      }
    }),
  );
  await sweepEvidence(ctx);
  return { retryAt: now + Math.min(probeMs, ctx.deployments.cooldown.windowMs) };
};
