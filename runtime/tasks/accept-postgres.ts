import type { PoolClient } from 'pg';
import { HOLD_TAKEN, PG_AVAILABLE, type PgSpendParams, pgHoldCtes, SPEND_TAKEN } from '../ledger/hold-postgres.js';
import { keySpendUsedPg } from '../ledger/key-spend.js';
import { pgTransaction } from '../storage/pg-direct.js';
import { pgScheduleWork, pgWorkRows } from '../queue/schedule-work-direct.js';
import {
  firstWork,
  idempotencyRow,
  insufficientCredits,
  newTaskRow,
  replayedTaskId,
  type Acceptance,
  type Created,
  type IdempotencyRow,
} from './acceptance.js';
import { budgetRefusal, keySpendOf, refuseByKeyPolicy, refuseInFlightPostgres } from './key-policy-admission.js';
import type { TaskRow } from './task-record.js';

/**
 * createTask's writes on PostgreSQL in one statement (one round trip instead of seven, between
 * BEGIN and COMMIT): the Idempotency-Key row, the hold (the ledger's pieces, ledger/hold-postgres.ts:
 * the wallet's available moved to held only where it covers the amount, the hold row and its ledger
 * row), the task and its first work items. Each write after the key's only happens when the one before
 * it did: an existing unexpired key writes nothing (a replay), a short wallet writes nothing after
 * the key (the error then rolls the key back). Rows go in as JSON read by json_populate_record,
 * so the columns and their types are the table's own. A concurrent request with the same key waits
 * on the key's row, then sees it committed (no insert: a replay) or rolled back (it inserts).
 */
/**
 * `guard`: a further condition of the hold; `keyCount`: the `keyed` column (1 without a key);
 * `spend`: the key budget's parameters when the key has one (then `budgeted` says whether it covered the hold).
 */
const HOLD_AND_TASK = (guard: string, keyCount: string, spend?: PgSpendParams) => `
${pgHoldCtes(guard, spend)},
task AS (
  INSERT INTO tasks SELECT r.* FROM json_populate_record(NULL::tasks, $5::json) r WHERE EXISTS (SELECT 1 FROM ${HOLD_TAKEN})
),
work AS (
  ${pgScheduleWork('$6', `EXISTS (SELECT 1 FROM ${HOLD_TAKEN})`)}
)
SELECT ${keyCount} AS keyed, (SELECT count(*) FROM ${HOLD_TAKEN})::int AS held, ${PG_AVAILABLE} AS available,
  ${spend ? `(SELECT count(*) FROM ${SPEND_TAKEN})::int` : '1'} AS budgeted`;

/** The key's row first: an unexpired row of the key is left as it is and nothing else is written. */
const KEY_CTE = `key AS (
  INSERT INTO idempotency_keys (account_id, scope, key, api_key_id, fingerprint, task_id, created_at, expires_at)
  SELECT r.account_id, r.scope, r.key, r.api_key_id, r.fingerprint, r.task_id, r.created_at, r.expires_at
  FROM json_populate_record(NULL::idempotency_keys, $7::json) r
  ON CONFLICT (account_id, scope, key) DO UPDATE SET api_key_id = excluded.api_key_id,
    fingerprint = excluded.fingerprint, task_id = excluded.task_id, created_at = excluded.created_at,
    expires_at = excluded.expires_at
  WHERE idempotency_keys.expires_at <= $3::bigint
  RETURNING 1
)`;

const spendAt = (first: number): PgSpendParams => ({
  keyId: `$${first}`,
  periodStart: `$${first + 1}`,
  budget: `$${first + 2}`,
});

/** The four forms of the statement: with or without an Idempotency-Key, with or without a key budget. */
const ACCEPT = {
  name: 'create-task-accept',
  text: `WITH ${HOLD_AND_TASK('', '1')}`,
};
const ACCEPT_KEYED = {
  name: 'create-task-accept-keyed',
  text: `WITH ${KEY_CTE},
${HOLD_AND_TASK('AND EXISTS (SELECT 1 FROM key)', '(SELECT count(*) FROM key)::int')}`,
};
const ACCEPT_BUDGETED = {
  name: 'create-task-accept-budgeted',
  text: `WITH ${HOLD_AND_TASK('', '1', spendAt(7))}`,
};
const ACCEPT_KEYED_BUDGETED = {
  name: 'create-task-accept-keyed-budgeted',
  text: `WITH ${KEY_CTE},
${HOLD_AND_TASK('AND EXISTS (SELECT 1 FROM key)', '(SELECT count(*) FROM key)::int', spendAt(8))}`,
};

const SELECT_KEY = {
  name: 'create-task-key',
  text: 'SELECT * FROM idempotency_keys WHERE account_id = $1 AND scope = $2 AND key = $3',
};
const SELECT_TASK = { name: 'create-task-replay', text: 'SELECT * FROM tasks WHERE id = $1' };

export function acceptOnPostgres(a: Acceptance): Promise<Created> {
  const { ctx, caller, request, options, taskId, now } = a;
  // The checks for a new task only are pure; made up front so the writes can go in one statement.
  let refusal: unknown;
  try {
    // The key's policy before the checks of a new task that follow it (docs/contracts.md, the refusal order).
    refuseByKeyPolicy(a);
    options.beforeHold?.();
  } catch (error) {
    refusal = error;
  }
  return pgTransaction(ctx.db, async (client): Promise<Created> => {
    const key = options.idempotencyKey === undefined ? undefined : idempotencyRow(a, options.idempotencyKey);
    if (refusal !== undefined) {
      if (key) {
        const replay = await replayOf(client, a, key);
        if (replay) return replay;
      }
      throw refusal;
    }
    if (caller.policy.maxTasksInFlight !== null) {
      // The replay first: a replayed request is never refused by the cap its own task fills.
      if (key) {
        const replay = await replayOf(client, a, key);
        if (replay) return replay;
      }
      await refuseInFlightPostgres(client, a);
    }
    const spend = keySpendOf(a);
    const task = newTaskRow(a);
    const values: unknown[] = [
      caller.accountId,
      taskId,
      now,
      request.price.maxCredits,
      JSON.stringify(task),
      pgWorkRows(now, firstWork(task)),
    ];
    if (key) values.push(JSON.stringify(key));
    if (spend) values.push(spend.keyId, spend.periodStart, spend.budget);
    const statement = key ? (spend ? ACCEPT_KEYED_BUDGETED : ACCEPT_KEYED) : spend ? ACCEPT_BUDGETED : ACCEPT;
    const result = await client.query<{ keyed: number; held: number; available: number | null; budgeted: number }>({
      ...statement,
      values,
    });
    const { keyed, held, available, budgeted } = result.rows[0];
    if (key) {
      if (keyed === 0) {
        const replay = await replayOf(client, a, key);
        if (replay) return replay;
        throw new Error(`idempotency key ${key.key} neither inserted nor found`);
      }
      ctx.faults.reach('create.idempotency-row');
    }
    if (spend && budgeted !== 1) throw budgetRefusal(a, await keySpendUsedPg(client, spend.keyId, spend.periodStart));
    if (held !== 1) {
      if (available === null) throw new Error(`account ${caller.accountId} has no wallet`);
      throw insufficientCredits(a, available);
    }
    ctx.faults.reach('create.hold');
    ctx.faults.reach('create.task-row');
    ctx.faults.reach('create.work-items'); // the last point before COMMIT: everything above rolls back
    return { task, replayed: false };
  });
}

/** The task of an unexpired row of the key (or its 409), undefined when there is none. */
async function replayOf(client: PoolClient, a: Acceptance, key: IdempotencyRow): Promise<Created | undefined> {
  const found = await client.query<IdempotencyRow>({ ...SELECT_KEY, values: [key.account_id, key.scope, key.key] });
  const existing = found.rows[0];
  if (!existing || existing.expires_at <= a.now) return undefined;
  const task = await client.query<TaskRow>({ ...SELECT_TASK, values: [replayedTaskId(existing, a)] });
  if (!task.rows[0]) throw new Error(`idempotency key of a missing task ${existing.task_id}`);
  return { task: task.rows[0], replayed: true };
}
