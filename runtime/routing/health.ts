import { sql } from 'kysely';
import type { Context } from '../context.js';
import type { Deployment } from '../deployments/deployment.js';
import type { FailureClass, UpstreamError } from '../deployments/upstream-error.js';
import type { Db } from '../storage/dialect.js';
import type { Executor } from '../storage/executor.js';
import type { Database } from '../storage/schema.js';
import { writeTransaction } from '../storage/write-transaction.js';
import { OPEN_STATES } from '../tasks/states.js';
import type { Cooldown, Deployments } from './router.js';

/**
 * A deployment's health as every process sees it, from the outcome of every call made to it
 * (submits, polls, result downloads, cancels), in this order of precedence:
 * - `down`: at least twice `cooldown.failures` calls failed in a row; it stays cooling down (each
 *   further failure renews the cool-down) and is tried again when the cool-down ends;
 * - `cooling`: `cooldown.failures` calls failed in a row: skipped by the router until `coolingUntil`;
 * - `degraded`: its last call failed (fewer than `cooldown.failures` in a row): still routed;
 * - `full`: maxInFlight reached;
 * - `ok`.
 * A call it answers ends the run of failures (a cool-down in progress runs out by itself).
 */
export type HealthState = 'ok' | 'degraded' | 'cooling' | 'down' | 'full';

/** What every process knows about a deployment: its slots in use, its health, its last failure. */
export interface DeploymentState {
  name: string;
  kind: string;
  state: HealthState;
  inFlight: number;
  maxInFlight: number | null;
  /** One account's share of maxInFlight (the file's, or half of it rounded up). */
  maxInFlightPerAccount: number | null;
  /** Calls (submits, polls, downloads, cancels) failed in a row. */
  consecutiveFailures: number;
  coolingUntil: string | null;
  /** The last failed call and why (`poll: GET ...: status 503`), with the operator's key redacted. */
  lastFailure: string | null;
  /** Its failure class (runtime/deployments/upstream-error.ts). */
  lastFailureClass: FailureClass | null;
  lastFailureAt: string | null;
}

/** The calls whose outcome counts toward a deployment's health. */
export type UpstreamCall = 'submit' | 'poll' | 'download' | 'cancel';

/** Failed calls in a row that make a deployment `down`: twice the count that cools it down. */
export function downAfter(cooldown: Cooldown): number {
  return cooldown.failures * 2;
}

/** The health state of one deployment's row as of `now` (no row: never failed). */
export function healthState(
  row: Pick<Database['upstream_health'], 'consecutive_failures' | 'cooldown_until'> | undefined,
  cooldown: Cooldown,
  full: boolean,
  now: number,
): HealthState {
  const failures = row?.consecutive_failures ?? 0;
  const cooling = row?.cooldown_until != null && row.cooldown_until > now;
  if (failures >= downAfter(cooldown)) return 'down';
  if (cooling) return 'cooling';
  if (failures > 0) return 'degraded';
  return full ? 'full' : 'ok';
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
      state: healthState(row, deployments.cooldown, max !== null && count >= max, now),
      inFlight: count,
      maxInFlight: max,
      maxInFlightPerAccount: deployments.maxInFlightPerAccount(d.name) ?? null,
      consecutiveFailures: row?.consecutive_failures ?? 0,
      coolingUntil: cooling ? iso(row!.cooldown_until) : null,
      lastFailure: row?.last_failure ?? null,
      lastFailureClass: (row?.last_failure_class as FailureClass | null | undefined) ?? null,
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
      last_failure_class: null,
      updated_at: now,
    })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
}

/**
 * A call the deployment failed (a submit that created nothing or may have, a poll, a download, a
 * cancel): the run of failures grows; from the Nth in a row (cooldown.failures) each failure
 * (re)starts the cool-down; the first of a run of twice that makes it `down`. Both are logged once.
 */
export async function recordCallFailure(
  ctx: Context,
  name: string,
  call: UpstreamCall,
  error: Pick<UpstreamError, 'failure' | 'message'>,
): Promise<void> {
  const now = ctx.clock.now();
  const { failures, ms } = ctx.deployments.cooldown;
  const detail = `${call}: ${error.message}`.slice(0, 300);
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
        last_failure: detail,
        last_failure_class: error.failure,
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
      { deployment: name, failure: error.failure, detail },
      `deployment ${name} failed ${failures} calls in a row; cooling down for ${ms} ms`,
    );
  if (count === downAfter(ctx.deployments.cooldown))
    ctx.log.warn(
      { deployment: name, failure: error.failure, detail },
      `deployment ${name} failed ${count} calls in a row: down; tried again as each cool-down of ${ms} ms ends`,
    );
}

/**
 * A call the deployment answered: the run of failures ends (a cool-down in progress runs out by
 * itself). Read first, so the common case (no failures on record) writes nothing. A deployment in
 * this process (the simulator) never fails a call, so it has no run to end: nothing is read.
 */
export async function recordCallAnswered(
  ctx: Context,
  deployment: Pick<Deployment, 'name' | 'inProcess'>,
): Promise<void> {
  if (deployment.inProcess) return;
  const { name } = deployment;
  const row = await ctx.db.kysely
    .selectFrom('upstream_health')
    .select('consecutive_failures')
    .where('name', '=', name)
    .executeTakeFirst();
  if (!row || row.consecutive_failures === 0) return;
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
  const pin = async (db: Executor) => {
    const taken = await db
      .updateTable('tasks')
      // The first slot taken is the task's first submit attempt: the submit window counts from it.
      .set({ deployment: name, updated_at: now, first_submit_at: sql`coalesce(first_submit_at, ${now})` })
      .where('id', '=', taskId)
      .where('state', '=', 'queued')
      .where('deployment', 'is', null)
      .executeTakeFirst();
    return Number(taken.numUpdatedRows) === 1;
  };
  // No cap, nothing to read first: on PostgreSQL the one statement is its own transaction (no
  // BEGIN and COMMIT round trips); on SQLite it joins the commit group like any write.
  if (max === undefined && !ctx.db.sqliteGroup) return pin(ctx.db.kysely);
  return writeTransaction(ctx.db, async (trx) => {
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
    return pin(trx);
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
