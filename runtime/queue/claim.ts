import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { BetterSqliteDatabase, Db } from '../storage/dialect.js';
import type { Database } from '../storage/schema.js';
import type { KindFilter } from './lanes.js';
import type { WorkOutcome } from './work-handler.js';

export type WorkItem = Selectable<Database['work_items']>;

/** No account cap (runOnce, or MEDIAFORGE_WORKER_ACCOUNT_CAP=0): larger than any lane. */
export const NO_CAP = 1_000_000_000;

export interface ClaimScope {
  kinds: KindFilter;
  /** Most items of one account leased at once in this lane (items without a task have no account). */
  accountCap: number;
  now: number;
}

function kindsOf(scope: ClaimScope): RawBuilder<unknown> {
  const { kinds, except } = scope.kinds;
  if (kinds.length === 0) return except ? sql`1 = 1` : sql`1 = 0`;
  const list = sql.join(kinds.map((kind) => sql`${kind}`));
  return except ? sql`w.kind NOT IN (${list})` : sql`w.kind IN (${list})`;
}

/**
 * The accounts' items of this lane under a live lease (any worker's), counted per account. The
 * account of an item is its task's (a delivery's task belongs to the endpoint's account). Leased
 * items are few: the index work_leased (migration 0006) finds them without the backlog. The unary
 * `+` keeps SQLite's planner from preferring the done_at index, which would walk every unfinished item.
 */
function busyAccounts(scope: ClaimScope): RawBuilder<unknown> {
  return sql`busy AS (
    SELECT t.account_id AS account_id, COUNT(*) AS n
    FROM work_items w JOIN tasks t ON t.id = w.task_id
    WHERE w.lease_until >= ${scope.now} AND +w.done_at IS NULL AND ${kindsOf(scope)}
    GROUP BY t.account_id)`;
}

/** Due-or-not unleased items of the lane whose account is below its cap (or that have none). */
function claimable(scope: ClaimScope): RawBuilder<unknown> {
  return sql`w.done_at IS NULL AND (w.lease_until IS NULL OR w.lease_until < ${scope.now}) AND ${kindsOf(scope)}
    AND (t.account_id IS NULL OR t.account_id NOT IN (SELECT account_id FROM busy WHERE n >= ${scope.accountCap}))`;
}

/**
 * One statement takes the leases of up to `limit` due items of one lane and returns them, oldest
 * due first, skipping the items of accounts that already hold `accountCap` leases in the lane and
 * taking at most what each account has left under its cap. The candidates are the `limit` oldest
 * claimable items; an account under its cap that had more of them than its room is full at the
 * next claim, which then reaches the items behind it. On PostgreSQL rows another worker is
 * claiming are skipped, not waited for; SQLite runs the statement under its write lock, so two
 * processes on one file never take the same item either.
 */
export async function claimItems(
  db: Db,
  scope: ClaimScope,
  owner: string,
  leaseUntil: number,
  limit: number,
): Promise<WorkItem[]> {
  if (db.sqlite && !db.sqlite.inTransaction && !hasDueItem(db.sqlite, scope)) return [];
  const skipLocked = db.engine === 'postgres' ? sql`FOR UPDATE OF w SKIP LOCKED` : sql``;
  const claim = sql<WorkItem>`
    WITH ${busyAccounts(scope)},
    candidates AS (
      SELECT w.id AS id, w.due_at AS due_at, t.account_id AS account_id
      FROM work_items w LEFT JOIN tasks t ON t.id = w.task_id
      WHERE w.due_at <= ${scope.now} AND ${claimable(scope)}
      ORDER BY w.due_at LIMIT ${limit}
      ${skipLocked}),
    ranked AS (
      SELECT c.id AS id, c.account_id AS account_id, ROW_NUMBER() OVER (PARTITION BY c.account_id ORDER BY c.due_at, c.id) AS n
      FROM candidates c)
    UPDATE work_items SET lease_owner = ${owner}, lease_until = ${leaseUntil}, attempts = attempts + 1
    WHERE id IN (
      SELECT r.id FROM ranked r LEFT JOIN busy b ON b.account_id = r.account_id
      WHERE r.account_id IS NULL OR r.n + COALESCE(b.n, 0) <= ${scope.accountCap})
    RETURNING *`;
  const group = db.sqliteGroup;
  if (group) {
    // SQLite: the claim shares a commit with the other lanes' claims and the outcomes of the same moment.
    const { sql: text, parameters } = claim.compile(db.kysely);
    return group.run((sqlite) => sqlite.prepare(text).all(...parameters) as WorkItem[]);
  }
  return (await claim.execute(db.kysely)).rows;
}

/**
 * SQLite: whether the lane has an unfinished item due now and not under a live lease, whatever its
 * account's leases: one probe of the lane's due index. A claim is a statement of CTEs that
 * materializes, sorts and writes: 0.3-0.6 ms even when it finds nothing, and a place in a commit
 * group. Every new task wakes every lane, so the lanes with nothing due (checks and deliveries,
 * most of the time) claimed hundreds of times a second for nothing (bench/runs/2026-11-27.md).
 * Read outside any transaction (the caller checks), so it sees committed rows only; an item that
 * becomes due just after it is claimed at the lane's next turn, as one due just after a claim is.
 */
function hasDueItem(sqlite: BetterSqliteDatabase, scope: ClaimScope): boolean {
  const { kinds, except } = scope.kinds;
  if (kinds.length === 0 && !except) return false;
  const list = kinds.map(() => '?').join(', ');
  const kindTest = kinds.length === 0 ? '' : except ? ` AND kind NOT IN (${list})` : ` AND kind IN (${list})`;
  const probe = `SELECT 1 FROM work_items WHERE due_at <= ? AND done_at IS NULL AND (lease_until IS NULL OR lease_until < ?)${kindTest} LIMIT 1`;
  return sqlite.prepare(probe).get(scope.now, scope.now, ...kinds) !== undefined;
}

/**
 * When the lane's next claimable item is due (undefined: none). Items under a lease, and those of
 * accounts at their cap, are left out: they cannot be claimed before a lease ends, and this
 * worker's own items wake the loop when they end (a dead worker's lease is noticed within
 * workerIdleMs). Counting them would spin the loop while an item is in flight.
 */
export async function nextDueAt(db: Db, scope: ClaimScope): Promise<number | undefined> {
  const { rows } = await sql<{ due_at: number }>`
    WITH ${busyAccounts(scope)}
    SELECT w.due_at AS due_at
    FROM work_items w LEFT JOIN tasks t ON t.id = w.task_id
    WHERE ${claimable(scope)}
    ORDER BY w.due_at LIMIT 1`.execute(db.kysely);
  return rows.length === 0 ? undefined : Number(rows[0].due_at);
}

/**
 * Moves the lease of an item this worker still holds to `leaseUntil`; false when the item is no
 * longer this worker's (another took it after the lease ran out) or is done.
 */
export async function renewLease(db: Db, id: number, owner: string, leaseUntil: number): Promise<boolean> {
  const renewed = await db.kysely
    .updateTable('work_items')
    .set({ lease_until: leaseUntil })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .where('done_at', 'is', null)
    .executeTakeFirst();
  return Number(renewed.numUpdatedRows) === 1;
}

const MARK_DONE = 'update "work_items" set "done_at" = ?, "lease_until" = null where "id" = ? and "lease_owner" = ?';
const RELEASE_FOR_RETRY =
  'update "work_items" set "due_at" = ?, "lease_owner" = null, "lease_until" = null, "attempts" = coalesce(?, "attempts") where "id" = ? and "lease_owner" = ?';

/**
 * Records a run's outcome on an item under this owner's lease: done, or due again at `retryAt`
 * with its lease released (and its attempts set where the handler said). An item whose lease
 * another worker took over is left as it is: that worker records its own run.
 */
export async function recordOutcome(
  db: Db,
  id: number,
  owner: string,
  outcome: WorkOutcome,
  now: number,
): Promise<void> {
  const group = db.sqliteGroup;
  if (group) {
    // SQLite: one prepared statement, committed with the other items that ended in the same turn of the event loop.
    await group.run((sqlite) => {
      if ('done' in outcome) sqlite.prepare(MARK_DONE).run(now, id, owner);
      else sqlite.prepare(RELEASE_FOR_RETRY).run(outcome.retryAt, outcome.attempts ?? null, id, owner);
    });
    return;
  }
  const owned = db.kysely.updateTable('work_items').where('id', '=', id).where('lease_owner', '=', owner);
  if ('done' in outcome) await owned.set({ done_at: now, lease_until: null }).execute();
  else
    await owned
      .set({
        due_at: outcome.retryAt,
        lease_owner: null,
        lease_until: null,
        ...(outcome.attempts !== undefined ? { attempts: outcome.attempts } : {}),
      })
      .execute();
}
