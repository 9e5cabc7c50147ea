import type { PoolClient } from 'pg';
import type { Caller } from '../accounts/accounts.js';
import {
  budgetExceeded,
  budgetPeriodAt,
  inFlightCapReached,
  NO_POLICY,
  refuseModelNotAllowed,
} from '../accounts/key-policy.js';
import type { Context } from '../context.js';
import type { KeySpendCharge } from '../ledger/ledger.js';
import type { BetterSqliteDatabase } from '../storage/dialect.js';
import type { Acceptance } from './acceptance.js';
import type { PreparedRequest } from './prepare-request.js';
import { tasksInFlightOfKey } from './task-rows.js';

/**
 * A new task against its key's policy (issue 40), in createTask's transaction, after the
 * Idempotency-Key's replay lookup and before the debt, the funds and the availability
 * (docs/contracts.md, the refusal order): the model allow-list (403 40330), the most tasks in
 * flight (429 42902: queued + running of the key) and, in the hold's own statement, the budget
 * (402 40203). Expiry and networks are checked at authentication (http/auth.ts).
 */

/** The budget's counter this hold counts against; null when the key has no budget. */
export function keySpendOf(a: Acceptance): KeySpendCharge | null {
  const budget = a.caller.policy.budget;
  if (!budget) return null;
  return { keyId: a.caller.keyId, periodStart: budgetPeriodAt(budget.period, a.now).start, budget: budget.credits };
}

/** The checks that need no database: the model allow-list. */
export function refuseByKeyPolicy(a: Acceptance): void {
  refuseModelNotAllowed(a.caller.policy, a.request.model.info.id);
}

const IN_FLIGHT = `select count(*) as "n" from "tasks" where "api_key_id" = ? and "state" in ('queued', 'running')`;

/** The cap on SQLite: transactions are serialized, so the count is exact. */
export function refuseInFlightSqlite(sqlite: BetterSqliteDatabase, a: Acceptance): void {
  const cap = a.caller.policy.maxTasksInFlight;
  if (cap === null) return;
  const { n } = sqlite.prepare(IN_FLIGHT).get(a.caller.keyId) as { n: number };
  if (Number(n) >= cap) throw inFlightCapReached(Number(n));
}

/**
 * The cap on PostgreSQL: the key's row is locked first, so two requests of one key count one after the
 * other (each statement of READ COMMITTED sees what committed before it began): the second sees the
 * first's task. Only a capped key pays these two round trips.
 */
export async function refuseInFlightPostgres(client: PoolClient, a: Acceptance): Promise<void> {
  const cap = a.caller.policy.maxTasksInFlight;
  if (cap === null) return;
  await client.query({
    name: 'key-policy-lock',
    text: 'SELECT 1 FROM api_keys WHERE id = $1 FOR UPDATE',
    values: [a.caller.keyId],
  });
  const { rows } = await client.query<{ n: string }>({
    name: 'key-policy-in-flight',
    text: `SELECT count(*) AS n FROM tasks WHERE api_key_id = $1 AND state IN ('queued', 'running')`,
    values: [a.caller.keyId],
  });
  const n = Number(rows[0].n);
  if (n >= cap) throw inFlightCapReached(n);
}

/** 402 40203 with what is left of the budget. */
export function budgetRefusal(a: Acceptance, used: number) {
  return budgetExceeded(a.caller.policy, a.request.price.maxCredits, used, a.now);
}

/** A quote as createTask would answer it, short of writing: the allow-list, the cap, the budget as it stands. */
export async function refuseQuoteByKeyPolicy(ctx: Context, caller: Caller, request: PreparedRequest): Promise<void> {
  const { policy } = caller;
  if (policy === NO_POLICY) return;
  refuseModelNotAllowed(policy, request.model.info.id);
  if (policy.maxTasksInFlight !== null) {
    const n = await tasksInFlightOfKey(ctx.db.kysely, caller.keyId);
    if (n >= policy.maxTasksInFlight) throw inFlightCapReached(n);
  }
  if (policy.budget) {
    const now = ctx.clock.now();
    const used = await ctx.ledger.keySpendUsed(
      ctx.db.kysely,
      caller.keyId,
      budgetPeriodAt(policy.budget.period, now).start,
    );
    if (used + request.price.maxCredits > policy.budget.credits)
      throw budgetExceeded(policy, request.price.maxCredits, used, now);
  }
}
