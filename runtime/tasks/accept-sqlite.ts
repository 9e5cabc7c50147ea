import { availableInGroup, holdInGroup, keySpendUsedInGroup } from '../ledger/sqlite.js';
import { sqliteInsertText } from '../storage/sqlite-insert-text.js';
import { scheduleWorkSqlite } from '../queue/schedule-work-direct.js';
import {
  firstWork,
  idempotencyRow,
  insufficientCredits,
  newTaskRow,
  replayedTaskId,
  TASK_COLUMNS,
  type Acceptance,
  type Created,
  type IdempotencyRow,
} from './acceptance.js';
import { budgetRefusal, keySpendOf, refuseByKeyPolicy, refuseInFlightSqlite } from './key-policy-admission.js';
import type { TaskRow } from './task-record.js';

const KEY_COLUMNS = [
  'account_id',
  'scope',
  'key',
  'api_key_id',
  'fingerprint',
  'task_id',
  'created_at',
  'expires_at',
] as const satisfies readonly (keyof IdempotencyRow)[];
const SELECT_KEY = 'select * from "idempotency_keys" where "account_id" = ? and "scope" = ? and "key" = ?';
const DELETE_KEY = 'delete from "idempotency_keys" where "account_id" = ? and "scope" = ? and "key" = ?';
const INSERT_KEY = sqliteInsertText('idempotency_keys', KEY_COLUMNS);
const INSERT_TASK = sqliteInsertText('tasks', TASK_COLUMNS);

/**
 * createTask's transaction on SQLite, as one synchronous function committed with the other requests
 * of the same moment (storage/sqlite-group-commit.ts): the Idempotency-Key row (or a replay), the
 * hold, the task in `queued` and its first work items.
 */
export function acceptOnSqlite(a: Acceptance): Promise<Created> {
  const { ctx, caller, request, options, taskId, now } = a;
  const group = ctx.db.sqliteGroup;
  if (!group) throw new Error('acceptOnSqlite needs the SQLite engine');
  return group.run((sqlite): Created => {
    if (options.idempotencyKey !== undefined) {
      const key = idempotencyRow(a, options.idempotencyKey);
      const existing = sqlite.prepare(SELECT_KEY).get(key.account_id, key.scope, key.key) as IdempotencyRow | undefined;
      if (existing && existing.expires_at > now) {
        const task = sqlite.prepare('select * from "tasks" where "id" = ?').get(replayedTaskId(existing, a));
        if (!task) throw new Error(`idempotency key of a missing task ${existing.task_id}`);
        return { task: task as TaskRow, replayed: true };
      }
      if (existing) sqlite.prepare(DELETE_KEY).run(key.account_id, key.scope, key.key);
      sqlite.prepare(INSERT_KEY).run(KEY_COLUMNS.map((c) => key[c]));
      ctx.faults.reach('create.idempotency-row');
    }
    // The key's policy before the checks of a new task that follow it (docs/contracts.md, the refusal order).
    refuseByKeyPolicy(a);
    refuseInFlightSqlite(sqlite, a);
    options.beforeHold?.();
    const spend = keySpendOf(a);
    const outcome = holdInGroup(sqlite, {
      accountId: caller.accountId,
      taskId,
      amount: request.price.maxCredits,
      now,
      spend,
    });
    if (outcome === 'budget') throw budgetRefusal(a, keySpendUsedInGroup(sqlite, spend!.keyId, spend!.periodStart));
    if (outcome === 'funds') {
      const available = availableInGroup(sqlite, caller.accountId);
      if (available === undefined) throw new Error(`account ${caller.accountId} has no wallet`);
      throw insufficientCredits(a, available);
    }
    ctx.faults.reach('create.hold');
    const task = newTaskRow(a);
    sqlite.prepare(INSERT_TASK).run(TASK_COLUMNS.map((c) => task[c]));
    ctx.faults.reach('create.task-row');
    scheduleWorkSqlite(sqlite, now, firstWork(task));
    ctx.faults.reach('create.work-items'); // the last statement before COMMIT: everything above rolls back
    return { task, replayed: false };
  });
}
