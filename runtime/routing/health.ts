import type { Context } from '../context.js';
import type { Db } from '../storage/dialect.js';
import type { Executor } from '../storage/executor.js';
import type { Database } from '../storage/schema.js';
import { OPEN_STATES } from '../tasks/states.js';
import type { Deployments } from './router.js';

/** What every process knows about a deployment: its slots in use, its cool-down, its last failure. */
export interface DeploymentState {
  name: string;
  kind: string;
  /** ok, cooling (too many consecutive failed submits), or full (maxInFlight reached). */
  state: 'ok' | 'cooling' | 'full';
  inFlight: number;
  maxInFlight: number | null;
  /** One account's share of maxInFlight (the file's, or half of it rounded up). */
  maxInFlightPerAccount: number | null;
  consecutiveFailures: number;
  coolingUntil: string | null;
  lastFailure: string | null;
  lastFailureAt: string | null;
}

const iso = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(ms).toISOString());

/** Tasks submitted and not yet ended, per deployment (the slots maxInFlight counts). */
export async function inFlightCounts(db: Executor, names: readonly string[]): Promise<Map<string, number>> {
  if (names.length === 0) return new Map();
  const rows = await db
    .selectFrom('tasks')
    .select(['deployment', (eb) => eb.fn.countAll<number>().as('n')])
    .where('deployment', 'in', [...names])
    .where('state', 'in', [...OPEN_STATES])
    .groupBy('deployment')
    .execute();
  return new Map(rows.map((r) => [r.deployment!, Number(r.n)]));
}

/** The deployments' rows of upstream_health, by name. */
export async function healthRows(db: Db['kysely'], names: readonly string[]) {
  if (names.length === 0) return new Map<string, Database['upstream_health']>();
  const rows = await db
    .selectFrom('upstream_health')
    .selectAll()
    .where('name', 'in', [...names])
    .execute();
  return new Map(rows.map((r) => [r.name, r]));
}

/** Every deployment's state as of now: /readyz, /metrics and `mediaforge deployments status`. */
export async function deploymentStates(
  db: Db['kysely'],
  deployments: Deployments,
  now: number,
): Promise<DeploymentState[]> {
  const names = deployments.list().map((d) => d.name);
  const [inFlight, health] = await Promise.all([inFlightCounts(db, names), healthRows(db, names)]);
  return deployments.list().map((d) => {
    const row = health.get(d.name);
    const max = deployments.maxInFlight(d.name) ?? null;
    const count = inFlight.get(d.name) ?? 0;
    const cooling = row?.cooldown_until != null && row.cooldown_until > now;
    return {
      name: d.name,
      kind: d.kind ?? 'custom',
      state: cooling ? 'cooling' : max !== null && count >= max ? 'full' : 'ok',
      inFlight: count,
      maxInFlight: max,
      maxInFlightPerAccount: deployments.maxInFlightPerAccount(d.name) ?? null,
      consecutiveFailures: row?.consecutive_failures ?? 0,
      coolingUntil: cooling ? iso(row!.cooldown_until) : null,
      lastFailure: row?.last_failure ?? null,
      lastFailureAt: iso(row?.last_failure_at),
    };
  });
}

/** The deployment's row, created at its first use (so that it can be locked). */
async function ensureRow(db: Executor, name: string, now: number): Promise<void> {
  await db
    .insertInto('upstream_health')
    .values({
      name,
      consecutive_failures: 0,
      cooldown_until: null,
      last_failure: null,
      last_failure_at: null,
      updated_at: now,
    })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
}

/** A submit the deployment failed (nothing was created there): the Nth in a row cools it down. */
export async function recordSubmitFailure(ctx: Context, name: string, detail: string): Promise<void> {
  const now = ctx.clock.now();
  const { failures, ms } = ctx.deployments.cooldown;
  const count = await ctx.db.kysely.transaction().execute(async (trx) => {
    await ensureRow(trx, name, now);
    const row = await trx
      .selectFrom('upstream_health')
      .select('consecutive_failures')
      .where('name', '=', name)
      .$if(ctx.db.engine === 'postgres', (q) => q.forUpdate())
      .executeTakeFirstOrThrow();
    const failed = row.consecutive_failures + 1;
    await trx
      .updateTable('upstream_health')
      .set({
        consecutive_failures: failed,
        last_failure: detail.slice(0, 300),
        last_failure_at: now,
        updated_at: now,
        ...(failed >= failures ? { cooldown_until: now + ms } : {}),
      })
      .where('name', '=', name)
      .execute();
    return failed;
  });
  if (count === failures)
    ctx.log.warn(
      { deployment: name, detail },
      `deployment ${name} failed ${failures} submits in a row; cooling down for ${ms} ms`,
    );
}

/** A submit the deployment answered: the run of failures ends (a cool-down in progress runs out by itself). */
export async function recordSubmitAnswered(ctx: Context, name: string): Promise<void> {
  await ctx.db.kysely
    .updateTable('upstream_health')
    .set({ consecutive_failures: 0, updated_at: ctx.clock.now() })
    .where('name', '=', name)
    .where('consecutive_failures', '>', 0)
    .execute();
}

/** Tasks of one account submitted to a deployment and not yet ended (the account's part of its slots). */
async function accountInFlight(db: Executor, name: string, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('tasks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('deployment', '=', name)
    .where('state', 'in', [...OPEN_STATES])
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Takes one slot of a deployment for a task: in one transaction, with the deployment's row locked
 * (PostgreSQL; SQLite transactions are serialized already), the in-flight counts are read and the
 * task is pinned to the deployment only while the count is under maxInFlight and its account's
 * count under maxInFlightPerAccount. So both caps hold across any number of worker processes.
 * False: no slot (the task waits for one), or the task is no longer waiting.
 */
export async function takeSlot(ctx: Context, taskId: string, accountId: string, name: string): Promise<boolean> {
  const max = ctx.deployments.maxInFlight(name);
  const share = ctx.deployments.maxInFlightPerAccount(name);
  const now = ctx.clock.now();
  return ctx.db.kysely.transaction().execute(async (trx) => {
    if (max !== undefined) {
      await ensureRow(trx, name, now);
      await trx
        .selectFrom('upstream_health')
        .select('name')
        .where('name', '=', name)
        .$if(ctx.db.engine === 'postgres', (q) => q.forUpdate())
        .executeTakeFirstOrThrow();
      const count = (await inFlightCounts(trx, [name])).get(name) ?? 0;
      if (count >= max) return false;
      if (share !== undefined && (await accountInFlight(trx, name, accountId)) >= share) return false;
    }
    const taken = await trx
      .updateTable('tasks')
      .set({ deployment: name, updated_at: now })
      .where('id', '=', taskId)
      .where('state', '=', 'queued')
      .where('deployment', 'is', null)
      .executeTakeFirst();
    return Number(taken.numUpdatedRows) === 1;
  });
}

/** Gives a slot back after a submit that created nothing (the task may go to another deployment). */
export async function giveSlotBack(ctx: Context, taskId: string, name: string): Promise<void> {
  await ctx.db.kysely
    .updateTable('tasks')
    .set({ deployment: null, updated_at: ctx.clock.now() })
    .where('id', '=', taskId)
    .where('deployment', '=', name)
    .where('deployment_handle', 'is', null)
    .where('state', '=', 'queued')
    .execute();
}
