import type { PoolClient } from 'pg';
import {
  availableOf,
  HOLD_TAKEN,
  holdCtes,
  holdRefs,
  type HoldRefs,
  keySpendUsedOn,
  SPEND_TAKEN,
  type SpendRefs,
} from '../ledger/postgres.js';
import { pgTransaction } from '../storage/pg-direct.js';
import { PgParams } from '../storage/pg-params.js';
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

/** The inputs of createTask's statement, by name: the hold's, the key budget's, the task row, its work items, the Idempotency-Key row. */
type AcceptInput = keyof HoldRefs | keyof SpendRefs | 'task' | 'work' | 'key';

/**
 * createTask's writes on PostgreSQL in one statement (one round trip instead of seven, between
 * BEGIN and COMMIT): the Idempotency-Key row, the hold (the ledger's pieces, ledger/postgres.ts holdCtes:
 * the wallet's available moved to held only where it covers the amount, the hold row and its ledger
 * row), the task and its first work items. Each write after the key's only happens when the one before
 * it did: an existing unexpired key writes nothing (a replay), a short wallet writes nothing after
 * the key (the error then rolls the key back). Rows go in as JSON read by json_populate_record,
 * so the columns and their types are the table's own. A concurrent request with the same key waits
 * on the key's row, then sees it committed (no insert: a replay) or rolled back (it inserts).
 */
/**
 * One form of the statement: with or without an Idempotency-Key (then `keyed` says whether the key's
 * row went in), with or without a key budget (then `budgeted` says whether it covered the hold). Its
 * inputs are named (storage/pg-params.ts): the ledger's pieces read the references they are given.
 */
function acceptStatement(name: string, keyed: boolean, budgeted: boolean) {
  const p = new PgParams<AcceptInput>();
  const { at, spend } = holdRefs(p, budgeted);
  const guard = keyed ? 'AND EXISTS (SELECT 1 FROM key)' : '';
  const text = `WITH ${keyed ? `${keyCte(p.ref('key'), at.now)},\n` : ''}${holdCtes(at, guard, spend)},
task AS (
  INSERT INTO tasks SELECT r.* FROM json_populate_record(NULL::tasks, ${p.ref('task')}::json) r WHERE EXISTS (SELECT 1 FROM ${HOLD_TAKEN})
),
work AS (
  ${pgScheduleWork(p.ref('work'), `EXISTS (SELECT 1 FROM ${HOLD_TAKEN})`)}
)
SELECT ${keyed ? '(SELECT count(*) FROM key)::int' : '1'} AS keyed, (SELECT count(*) FROM ${HOLD_TAKEN})::int AS held,
  ${availableOf(at.accountId)} AS available, ${spend ? `(SELECT count(*) FROM ${SPEND_TAKEN})::int` : '1'} AS budgeted`;
  return { name, text, params: p };
}

/** The key's row first: an unexpired row of the key is left as it is and nothing else is written. */
const keyCte = (key: string, now: string) => `key AS (
  INSERT INTO idempotency_keys (account_id, scope, key, api_key_id, fingerprint, task_id, created_at, expires_at)
  SELECT r.account_id, r.scope, r.key, r.api_key_id, r.fingerprint, r.task_id, r.created_at, r.expires_at
  FROM json_populate_record(NULL::idempotency_keys, ${key}::json) r
  ON CONFLICT (account_id, scope, key) DO UPDATE SET api_key_id = excluded.api_key_id,
    fingerprint = excluded.fingerprint, task_id = excluded.task_id, created_at = excluded.created_at,
    expires_at = excluded.expires_at
  WHERE idempotency_keys.expires_at <= ${now}::bigint
  RETURNING 1
)`;

/** The four forms of the statement: with or without an Idempotency-Key, with or without a key budget. */
const ACCEPT = acceptStatement('create-task-accept', false, false);
const ACCEPT_KEYED = acceptStatement('create-task-accept-keyed', true, false);
const ACCEPT_BUDGETED = acceptStatement('create-task-accept-budgeted', false, true);
const ACCEPT_KEYED_BUDGETED = acceptStatement('create-task-accept-keyed-budgeted', true, true);

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
    const statement = key ? (spend ? ACCEPT_KEYED_BUDGETED : ACCEPT_KEYED) : spend ? ACCEPT_BUDGETED : ACCEPT;
    const values = statement.params.values({
      accountId: caller.accountId,
      taskId,
      now,
      amount: request.price.maxCredits,
      task: JSON.stringify(task),
      work: pgWorkRows(now, firstWork(task)),
      key: key && JSON.stringify(key),
      ...spend,
    });
    const result = await client.query<{ keyed: number; held: number; available: number | null; budgeted: number }>({
      name: statement.name,
      text: statement.text,
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
    if (spend && budgeted !== 1) throw budgetRefusal(a, await keySpendUsedOn(client, spend.keyId, spend.periodStart));
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
