import type { Context } from '../context.js';
import type { Deployment } from '../deployments/deployment.js';
import type { FailureClass, UpstreamError } from '../deployments/upstream-error.js';
import type { Db } from '../storage/dialect.js';
import type { Executor } from '../storage/executor.js';
import { writeTransaction } from '../storage/write-transaction.js';
import { OPEN_STATES } from '../tasks/states.js';
import { pinToDeployment, unpinFromDeployment } from '../tasks/submit-marks.js';
import type { Deployments } from './router.js';
import { ownerCooldowns, recordEvidence, trip } from './evidence.js';
import { probeSoon } from './probe-health.js';
import { DOWN_AFTER_TRIPS, ensureRow, type HealthRow, healthRows } from './health-row.js';

/**
 * A deployment's health as every process sees it, judged on evidence from many tasks and owners
 * (./evidence.ts), in this order of precedence:
 * - `down`: cooling for everyone after two cool-downs in a row without a recovery, or its probe
 *   failed (the service's own call: a refused key, nothing listening);
 * - `cooling`: cooling for everyone: skipped by the router until `coolingUntil`;
 * - `half-open`: its cool-down ended without a recovery: one trial call at a time decides (answered:
 *   `ok` again; failed: cooling again), and its probe, repeated on a timer, may recover it first;
 * - `degraded`: its last call failed: still routed (owners whose own tasks keep failing there
 *   cool down alone: `coolingOwners`);
 * - `full`: maxInFlight reached;
 * - `ok`.
 */
export type HealthState = 'ok' | 'degraded' | 'half-open' | 'cooling' | 'down' | 'full';

/** What every process knows about a deployment: its slots in use, its health, its last failure. */
export interface DeploymentState {
  name: string;
  kind: string;
  state: HealthState;
  inFlight: number;
  maxInFlight: number | null;
  /** One account's share of maxInFlight (the file's, or half of it rounded up). */
  maxInFlightPerAccount: number | null;
  /** Calls (submits, polls, downloads, cancels) failed in a row, whoever's task made them. */
  consecutiveFailures: number;
  /** Until when it cools for everyone; null: it does not. */
  coolingUntil: string | null;
  /** Owners cooling on it alone (their own tasks kept failing there): they fail over, nobody else notices. */
  coolingOwners: number;
  /** The last failed call and why (`poll: GET ...: status 503`), with the operator's key redacted. */
  lastFailure: string | null;
  /** Its failure class (runtime/deployments/upstream-error.ts). */
  lastFailureClass: FailureClass | null;
  lastFailureAt: string | null;
  /** Its last probe (a request that creates nothing) and what it found; null: never probed (no probe, or not yet). */
  lastProbe: { at: string; outcome: string; detail: string | null } | null;
}

/** The calls whose outcome counts toward a deployment's health. */
export type UpstreamCall = 'submit' | 'poll' | 'download' | 'cancel';

/** The health state of one deployment's row as of `now` (no row: never failed). */
export function healthState(
  row: Pick<HealthRow, 'consecutive_failures' | 'cooldown_until' | 'tripped_at' | 'trips'> | undefined,
  full: boolean,
  now: number,
): HealthState {
  if (row?.cooldown_until != null && row.cooldown_until > now)
    return Number(row.trips) >= DOWN_AFTER_TRIPS ? 'down' : 'cooling';
  if (row?.tripped_at != null) return 'half-open';
  if ((row?.consecutive_failures ?? 0) > 0) return 'degraded';
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

/** Whether a row cools its deployment for everyone now: cooling, down, or half-open with its trial call taken. */
export function coolingForEveryone(row: HealthRow | undefined, now: number): boolean {
  if (row?.cooldown_until != null && row.cooldown_until > now) return true;
  return row?.tripped_at != null && row.trial_until != null && row.trial_until > now;
}

/** Every deployment's state as of now: /readyz, /metrics and `mediaforge deployments status`. */
export async function deploymentStates(
  db: Db['kysely'],
  deployments: Deployments,
  now: number,
): Promise<DeploymentState[]> {
  const names = deployments.list().map((d) => d.name);
  const [inFlight, health, owners] = await Promise.all([
    inFlightCounts(db, names),
    healthRows(db, names),
    ownerCooldowns(db, names, now),
  ]);
  return deployments.list().map((d) => {
    const row = health.get(d.name);
    const max = deployments.maxInFlight(d.name) ?? null;
    const count = inFlight.get(d.name) ?? 0;
    const cooling = row?.cooldown_until != null && row.cooldown_until > now;
    return {
      name: d.name,
      kind: d.kind ?? 'custom',
      state: healthState(row, max !== null && count >= max, now),
      inFlight: count,
      maxInFlight: max,
      maxInFlightPerAccount: deployments.maxInFlightPerAccount(d.name) ?? null,
      consecutiveFailures: row?.consecutive_failures ?? 0,
      coolingUntil: cooling ? iso(row!.cooldown_until) : null,
      coolingOwners: owners.get(d.name)?.size ?? 0,
      lastFailure: row?.last_failure ?? null,
      lastFailureClass: (row?.last_failure_class as FailureClass | null | undefined) ?? null,
      lastFailureAt: iso(row?.last_failure_at),
      lastProbe:
        row?.probed_at != null && row.probe_outcome != null
          ? { at: iso(row.probed_at)!, outcome: row.probe_outcome, detail: row.probe_detail }
          : null,
    };
  });
}

/** How a failed call came to be made: the task it was made for, and whether it was a half-open trial. */
export interface FailedCallOf {
  task?: { id: string; account_id: string };
  trial?: boolean;
}

/**
 * A call the deployment failed (a submit that created nothing or may have, a poll, a download, a
 * cancel): the deployment's last failure and its run of failures are recorded for the operator, and
 * the task's failure is evidence (./evidence.ts), which alone decides cool-downs. A half-open
 * trial that failed cools the deployment for everyone again.
 */
export async function recordCallFailure(
  ctx: Context,
  name: string,
  call: UpstreamCall,
  error: Pick<UpstreamError, 'failure' | 'message'>,
  of: FailedCallOf = {},
): Promise<void> {
  const now = ctx.clock.now();
  ctx.callWindow.add(name, true, now);
  const detail = `${call}: ${error.message}`.slice(0, 300);
  await ensureRow(ctx.db.kysely, name, now);
  await ctx.db.kysely
    .updateTable('upstream_health')
    .set((eb) => ({
      consecutive_failures: eb('consecutive_failures', '+', 1),
      last_failure: detail,
      last_failure_class: error.failure,
      last_failure_at: now,
      updated_at: now,
    }))
    .where('name', '=', name)
    .execute();
  if (of.trial && (await trip(ctx.db.kysely, name, now, ctx.deployments.cooldown)))
    ctx.log.warn(
      { deployment: name, failure: error.failure, detail },
      `deployment ${name}: its trial call failed; cooling down again for ${ctx.deployments.cooldown.ms / 1000} s`,
    );
  if (of.task) await recordEvidence(ctx, { deployment: name, task: of.task, failure: error.failure });
  if (PROBE_WORTHY.has(error.failure)) probeSoon(ctx, name);
}

/** Failures no customer's request can cause (the upstream's address, the operator's key or path): the probe is asked at once to confirm them. */
const PROBE_WORTHY: ReadonlySet<FailureClass> = new Set(['unreachable', 'unauthorized', 'configuration']);

/**
 * A call the deployment answered: the run of failures ends. Read first, so the common case (no
 * failures on record) writes nothing. A deployment in this process (the simulator) never fails a
 * call, so it has no run to end: nothing is read. Recovery from a cool-down for everyone is the
 * trial call's or the probe's (trialAnswered, ./probe-health.ts), not any poll's.
 */
export async function recordCallAnswered(
  ctx: Context,
  deployment: Pick<Deployment, 'name' | 'inProcess'>,
): Promise<void> {
  if (deployment.inProcess) return;
  const { name } = deployment;
  ctx.callWindow.add(name, false, ctx.clock.now());
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

/** How long a half-open trial call holds the trial (a crashed process's trial is given up after it). */
const TRIAL_MS = 120_000;

/**
 * Takes the half-open deployment's one trial call: true when this caller may send it. Only a
 * paying, non-playground owner's task is sent as a trial (the caller checks), so a free account
 * cannot keep a deployment cooling by failing every trial.
 */
export async function takeTrial(ctx: Context, name: string): Promise<boolean> {
  const now = ctx.clock.now();
  const taken = await ctx.db.kysely
    .updateTable('upstream_health')
    .set({ trial_until: now + TRIAL_MS, updated_at: now })
    .where('name', '=', name)
    .where('tripped_at', 'is not', null)
    .where((eb) => eb.or([eb('cooldown_until', 'is', null), eb('cooldown_until', '<=', now)]))
    .where((eb) => eb.or([eb('trial_until', 'is', null), eb('trial_until', '<=', now)]))
    .executeTakeFirst();
  return Number(taken.numUpdatedRows) === 1;
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
  // The first slot taken is the task's first submit attempt too: the submit window counts from it.
  const pin = (db: Executor) => pinToDeployment(db, taskId, name, now);
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
  await unpinFromDeployment(ctx.db.kysely, taskId, name, ctx.clock.now());
}
