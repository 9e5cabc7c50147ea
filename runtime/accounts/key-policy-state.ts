import { keySpendUsed } from '../ledger/key-spend.js';
import type { Db } from '../storage/dialect.js';
import type { Executor } from '../storage/executor.js';
import { tasksInFlightOfKey } from '../tasks/task-rows.js';
import { keysOfAccount } from './accounts.js';
import { budgetPeriodAt, DEFAULT_BUDGET_ALERTS, type KeyPolicy, policyOfRow, policyView } from './key-policy.js';

/**
 * A key's policy as people read it, with what it has used now: the budget's credits used and left
 * in the current UTC period and the tasks in flight. One reading for the key itself
 * (GET /api/v1/keys/current), its owner (the console's keys page) and the operator (an account's
 * keys), so the three never disagree on what is left.
 */
export async function keyPolicyState(db: Executor, keyId: string, policy: KeyPolicy, now: number) {
  let budget = null;
  if (policy.budget) {
    const { start, end } = budgetPeriodAt(policy.budget.period, now);
    const used = await keySpendUsed(db, keyId, start);
    budget = {
      credits: policy.budget.credits,
      period: policy.budget.period,
      used,
      remaining: Math.max(0, policy.budget.credits - used),
      periodStart: new Date(start).toISOString(),
      periodEnd: end === null ? null : new Date(end).toISOString(),
      alerts: policy.budget.alerts ?? [...DEFAULT_BUDGET_ALERTS],
    };
  }
  const view = policyView(policy);
  return {
    budget,
    models: view.models,
    maxTasksInFlight: view.maxTasksInFlight,
    inFlight: await tasksInFlightOfKey(db, keyId),
    expiresAt: view.expiresAt,
    networks: view.networks,
  };
}

/**
 * An account's keys as the console shows them, to their owner and to the operator: prefix,
 * workspace, when made and revoked, and each key's policy state (keyPolicyState). Oldest first.
 */
export async function keysWithPolicy(db: Db, accountId: string, now: number) {
  const rows = await keysOfAccount(db, accountId);
  return Promise.all(
    rows.map(async (k) => ({
      keyId: k.id,
      prefix: k.key_prefix,
      workspace: k.workspace,
      createdAt: new Date(Number(k.created_at)).toISOString(),
      revokedAt: k.revoked_at === null ? null : new Date(Number(k.revoked_at)).toISOString(),
      policy: await keyPolicyState(db.kysely, k.id, policyOfRow(k), now),
    })),
  );
}
