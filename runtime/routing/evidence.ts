import type { Context } from '../context.js';
import type { FailureClass } from '../deployments/upstream-error.js';
import type { Executor } from '../storage/executor.js';
import type { Cooldown } from './router.js';
import { ownerOf } from './task-owner.js';

/**
 * Health from evidence, not from one customer (issue 37). Terms:
 * - evidence: a task that failed a call to a deployment (a submit, a poll, a download, a cancel,
 *   a reconciliation poll), one row per deployment and task. A task counts at most once per window
 *   however often it is retried, re-sent or polled.
 * - owner: the console user behind the task's account (both of a user's accounts are one owner),
 *   or the account itself where no user has it. Playground accounts and accounts that never bought
 *   credits are owners too, but their evidence never counts for everyone.
 * - owner cool-down: `cooldown.failures` failing tasks of one owner on a deployment within the
 *   window: that owner's tasks skip the deployment (fail over, or fail fast at admission) for
 *   `cooldown.seconds`; nobody else notices.
 * - trip (a cool-down for everyone): at least `minTasks` failing tasks of at least `minOwners`
 *   owners within the window, and at least `minFailurePercent` of the calls this process made to the
 *   deployment in that window failed. (`singleTenant`: any owner's `failures` tasks trip it.)
 *   A probe's failure (the service's own call, no customer's) trips it too (./probe-health.ts).
 * - half-open: a tripped deployment whose cool-down ended: one trial call at a time decides;
 *   answered, it recovers; failed, it trips again (two trips in a row: `down`). The probe, repeated
 *   while anything is cooling, recovers it without a customer's call.
 */
export interface TaskFailure {
  deployment: string;
  task: { id: string; account_id: string };
  failure: FailureClass;
}

/** What one failure changed: nothing (the task counted already), an owner's cool-down, a trip. */
export type EvidenceOutcome = 'counted-already' | 'recorded' | 'owner-cooled' | 'tripped';

/**
 * Records a task's failed call as evidence and decides what it changes. Returns what it did; the
 * caller has already updated the deployment's last-failure detail (./health.ts recordCallFailure).
 */
export async function recordEvidence(
  ctx: Context,
  { deployment, task, failure }: TaskFailure,
): Promise<EvidenceOutcome> {
  const now = ctx.clock.now();
  const { cooldown } = ctx.deployments;
  const since = now - cooldown.windowMs;
  const owner = await ownerOf(ctx.db.kysely, task.account_id);
  const inserted = await ctx.db.kysely
    .insertInto('upstream_evidence')
    .values({
      deployment,
      task_id: task.id,
      owner_id: owner.ownerId,
      counts_globally: owner.countsGlobally ? 1 : 0,
      failure_class: failure,
      failed_at: now,
    })
    // The same task again within the window changes nothing: one task is one piece of evidence.
    .onConflict((oc) =>
      oc
        .columns(['deployment', 'task_id'])
        .doUpdateSet({ failed_at: now, failure_class: failure })
        .where('upstream_evidence.failed_at', '<=', since),
    )
    .returning('task_id')
    .executeTakeFirst();
  if (!inserted) return 'counted-already';
  let outcome: EvidenceOutcome = 'recorded';
  if ((await ownerTasks(ctx.db.kysely, deployment, owner.ownerId, since)) >= cooldown.failures) {
    await coolOwner(ctx.db.kysely, deployment, owner.ownerId, now + cooldown.ms);
    ctx.log.info(
      { deployment, owner: owner.ownerId, failure },
      `deployment ${deployment}: ${cooldown.failures} tasks of one owner failed within ${cooldown.windowMs / 1000} s; that owner alone cools down for ${cooldown.ms / 1000} s`,
    );
    outcome = 'owner-cooled';
  }
  if ((owner.countsGlobally || cooldown.singleTenant) && (await enoughForEveryone(ctx, deployment, since, now))) {
    if (await trip(ctx.db.kysely, deployment, now, cooldown)) {
      ctx.log.warn(
        { deployment, failure },
        `deployment ${deployment}: failures of many tasks and owners within ${cooldown.windowMs / 1000} s; cooling down for everyone for ${cooldown.ms / 1000} s`,
      );
      outcome = 'tripped';
    }
  }
  return outcome;
}

/** Distinct failing tasks of one owner on the deployment within the window. */
async function ownerTasks(db: Executor, deployment: string, ownerId: string, since: number): Promise<number> {
  const row = await db
    .selectFrom('upstream_evidence')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('deployment', '=', deployment)
    .where('owner_id', '=', ownerId)
    .where('failed_at', '>', since)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function coolOwner(db: Executor, deployment: string, ownerId: string, until: number): Promise<void> {
  await db
    .insertInto('upstream_owner_cooldowns')
    .values({ deployment, owner_id: ownerId, until })
    .onConflict((oc) => oc.columns(['deployment', 'owner_id']).doUpdateSet({ until }))
    .execute();
}

/** Whether the window's evidence cools the deployment for everyone (module comment). */
async function enoughForEveryone(ctx: Context, deployment: string, since: number, now: number): Promise<boolean> {
  const { cooldown } = ctx.deployments;
  const row = await ctx.db.kysely
    .selectFrom('upstream_evidence')
    .select((eb) => [eb.fn.countAll<number>().as('tasks'), eb.fn.count<number>('owner_id').distinct().as('owners')])
    .where('deployment', '=', deployment)
    .where('failed_at', '>', since)
    .$if(!cooldown.singleTenant, (q) => q.where('counts_globally', '=', 1))
    .executeTakeFirstOrThrow();
  if (cooldown.singleTenant) return Number(row.tasks) >= cooldown.failures;
  if (Number(row.tasks) < cooldown.minTasks || Number(row.owners) < cooldown.minOwners) return false;
  const { calls, failures } = ctx.callWindow.counts(deployment, now);
  return calls > 0 && failures * 100 >= cooldown.minFailurePercent * calls;
}

/**
 * Cools the deployment for everyone, unless it is cooling already (more evidence during a
 * cool-down does not lengthen it: the probe and the trial call decide when it ends). True: tripped now.
 */
export async function trip(db: Executor, deployment: string, now: number, cooldown: Cooldown): Promise<boolean> {
  const result = await db
    .updateTable('upstream_health')
    .set((eb) => ({
      cooldown_until: now + cooldown.ms,
      tripped_at: eb.fn.coalesce('tripped_at', eb.val(now)),
      trips: eb('trips', '+', 1),
      trial_until: null,
      updated_at: now,
    }))
    .where('name', '=', deployment)
    .where((eb) => eb.or([eb('cooldown_until', 'is', null), eb('cooldown_until', '<=', now)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Owner cool-downs in force on these deployments, by deployment: the owners cooling there. */
export async function ownerCooldowns(
  db: Executor,
  names: readonly string[],
  now: number,
): Promise<Map<string, Map<string, number>>> {
  const byDeployment = new Map<string, Map<string, number>>();
  if (names.length === 0) return byDeployment;
  const rows = await db
    .selectFrom('upstream_owner_cooldowns')
    .select(['deployment', 'owner_id', 'until'])
    .where('deployment', 'in', [...names])
    .where('until', '>', now)
    .execute();
  for (const row of rows) {
    let owners = byDeployment.get(row.deployment);
    if (!owners) {
      owners = new Map();
      byDeployment.set(row.deployment, owners);
    }
    owners.set(row.owner_id, Number(row.until));
  }
  return byDeployment;
}

/** Evidence and owner cool-downs past any use (older than the window and ended): the maintenance sweep. */
export async function sweepEvidence(ctx: Context): Promise<void> {
  const now = ctx.clock.now();
  await ctx.db.kysely
    .deleteFrom('upstream_evidence')
    .where('failed_at', '<=', now - ctx.deployments.cooldown.windowMs)
    .execute();
  await ctx.db.kysely.deleteFrom('upstream_owner_cooldowns').where('until', '<=', now).execute();
}
