import type { Caller } from '../accounts/accounts.js';
import { budgetPeriodAt, DEFAULT_BUDGET_ALERTS } from '../accounts/key-policy.js';
import type { Context } from '../context.js';
import { newId } from '../ids.js';
import { scheduleWork } from '../queue/schedule-work.js';
import type { Trx } from '../storage/executor.js';
import { writeTransaction } from '../storage/write-transaction.js';
import type { TaskRow } from '../tasks/task-record.js';
import { pendingDelivery } from './enqueue.js';
import type { AlertEventType } from './events.js';

/**
 * Alerts before the money runs out (issue 40, point 5; docs/webhooks.md): `account.balance_low`
 * when a hold leaves the account's available credits below its threshold, `key.budget_threshold`
 * when a hold brings a key's budget to one of its thresholds. Checked right after the hold's
 * transaction commits (the accepted hook), on the wallet and key_spend rows as they stand then.
 *
 * Once per crossing, under any concurrency: each alert is an alert_crossings row unique on
 * (account, kind, subject, generation), inserted with its deliveries in one transaction; the
 * racing requests that saw the same crossing insert nothing and send nothing. The generation is what
 * re-arms an alert: the wallet's `purchased` for the balance (it moves only with a purchase or a
 * grant, so a balance hovering at the line, held and released, sends nothing more), the period's
 * start for a budget (the next period re-arms it).
 */

interface Crossing {
  type: AlertEventType;
  subject: string;
  generation: number;
  data: Record<string, unknown>;
}

/** The alert's Standard Webhooks body: `{type, timestamp, data}` as the task events, `data` of its own. */
export function alertBody(type: AlertEventType, now: number, data: Record<string, unknown>) {
  return { type, timestamp: new Date(now).toISOString(), data };
}

async function crossingsAfter(ctx: Context, caller: Caller, task: TaskRow): Promise<Crossing[]> {
  const crossings: Crossing[] = [];
  const watch = await ctx.ledger.lowBalanceWatch(ctx.db, caller.accountId);
  if (watch && watch.available < watch.threshold)
    crossings.push({
      type: 'account.balance_low',
      subject: '',
      generation: watch.purchased,
      data: {
        accountId: caller.accountId,
        thresholdCredits: watch.threshold,
        availableCredits: watch.available,
        taskId: task.id,
      },
    });
  const budget = caller.policy.budget;
  if (budget) {
    // The period the task was accepted in: its hold counted there.
    const period = budgetPeriodAt(budget.period, Number(task.created_at));
    const used = await ctx.ledger.keySpendUsedPrepared(ctx.db, caller.keyId, period.start);
    for (const percent of budget.alerts ?? DEFAULT_BUDGET_ALERTS) {
      // used / credits >= percent / 100, in integers.
      if (used * 100 < percent * budget.credits) continue;
      crossings.push({
        type: 'key.budget_threshold',
        subject: `${caller.keyId}:${percent}`,
        generation: period.start,
        data: {
          accountId: caller.accountId,
          keyId: caller.keyId,
          thresholdPercent: percent,
          budgetCredits: budget.credits,
          usedCredits: used,
          period: budget.period,
          periodStart: new Date(period.start).toISOString(),
          periodEnd: period.end === null ? null : new Date(period.end).toISOString(),
          taskId: task.id,
        },
      });
    }
  }
  return crossings;
}

/** The accepted hook: the crossings this task's hold made, each sent once to the endpoints that subscribed to it. */
export async function raiseAlerts(ctx: Context, caller: Caller, task: TaskRow): Promise<void> {
  const crossings = await crossingsAfter(ctx, caller, task);
  if (crossings.length === 0) return;
  const now = ctx.clock.now();
  const sent = await writeTransaction(ctx.db, async (trx) => {
    let deliveries = 0;
    for (const crossing of crossings) deliveries += await sendOnce(trx, caller.accountId, task.id, crossing, now);
    return deliveries;
  });
  if (sent > 0) ctx.wakeWorkers();
}

/** The crossing's row, and its deliveries when this transaction is the one that wrote it; the number of deliveries. */
async function sendOnce(trx: Trx, accountId: string, taskId: string, crossing: Crossing, now: number): Promise<number> {
  const inserted = await trx
    .insertInto('alert_crossings')
    .values({
      account_id: accountId,
      kind: crossing.type,
      subject: crossing.subject,
      generation: crossing.generation,
      created_at: now,
    })
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) !== 1) return 0;
  const endpoints = await trx
    .selectFrom('webhook_endpoints')
    .select(['id', 'url', 'events'])
    .where('account_id', '=', accountId)
    .where('disabled_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  // Opt-in: only an endpoint that named the event gets it.
  const subscribed = endpoints.filter((e) => e.events.split(',').includes(crossing.type));
  if (subscribed.length === 0) return 0;
  const body = JSON.stringify(alertBody(crossing.type, now, crossing.data));
  const rows = subscribed.map((endpoint) => ({
    id: newId('dlv'),
    // The task whose hold crossed the line: the delivery log and the work item name it.
    ...pendingDelivery(accountId, taskId, now),
    kind: 'endpoint' as const,
    endpoint_id: endpoint.id,
    event_type: crossing.type,
    url: endpoint.url,
    payload_version: 1,
    body,
  }));
  await trx.insertInto('webhook_deliveries').values(rows).execute();
  await scheduleWork(trx, now, ...rows.map((row) => ({ kind: 'deliver' as const, taskId, refId: row.id, dueAt: now })));
  return rows.length;
}
