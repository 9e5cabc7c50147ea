import { ApiError } from '../errors.js';
import type { Executor } from '../storage/executor.js';
import { csvLine } from './csv.js';

/**
 * An account's statement for one calendar month (UTC), from its ledger rows (docs/statements.md). A balance is available + held; how each kind moves it:
 * purchase, grant: + (purchases); refund, dispute, debt_paid: − and dispute_won: + (refunds, net);
 * settle: − (charges, by the task's model); hold, release, debt, debt_forgiven: 0 (a hold moves
 * available to held; a debt is owed, not taken). Hence, for every account and month:
 * opening + purchases − refunds − charges = closing.
 */
export interface Statement {
  month: string;
  openingBalance: number;
  purchases: { total: number; paid: number; granted: number };
  refunds: {
    total: number;
    refunded: number;
    disputed: number;
    disputesWon: number;
    debtPaid: number;
    /** Owed by refunds and disputes that found too little available (not taken: no balance change). */
    debtIncurred: number;
    debtForgiven: number;
  };
  charges: { total: number; byModel: { model: string; tasks: number; credits: number }[] };
  closingBalance: number;
}

const BALANCE_SIGN: Record<string, number> = {
  purchase: 1,
  grant: 1,
  dispute_won: 1,
  refund: -1,
  dispute: -1,
  debt_paid: -1,
  settle: -1,
};

/** [start, end) of a `YYYY-MM` month in UTC milliseconds. */
export function monthRange(month: string): { start: number; end: number } {
  const [year, mon] = month.split('-').map(Number) as [number, number];
  return { start: Date.UTC(year, mon - 1, 1), end: Date.UTC(year, mon, 1) };
}

/** The UTC month (`YYYY-MM`) a time falls in. */
export function monthOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

/**
 * Refuses a month after the current UTC month of the service's clock (`now`): its statement would
 * be zeros today and other figures later, which a reader could take for the month's account. A
 * month before the account existed is answered (zeros: nothing happened then). `YYYY-MM` strings
 * order as their months do, so the comparison is on the strings.
 */
export function refuseFutureMonth(month: string, now: number): void {
  const current = monthOf(now);
  if (month > current) throw new ApiError('statement_month_future', { param: 'month', params: { month, current } });
}

export async function statementOf(db: Executor, accountId: string, month: string): Promise<Statement> {
  const { start, end } = monthRange(month);
  const before = await db
    .selectFrom('ledger_entries')
    .select(['kind', (eb) => eb.fn.sum<number | string>('amount').as('total')])
    .where('account_id', '=', accountId)
    .where('created_at', '<', start)
    .groupBy('kind')
    .execute();
  const within = await db
    .selectFrom('ledger_entries')
    .select(['kind', (eb) => eb.fn.sum<number | string>('amount').as('total')])
    .where('account_id', '=', accountId)
    .where('created_at', '>=', start)
    .where('created_at', '<', end)
    .groupBy('kind')
    .execute();
  const byModel = await db
    .selectFrom('ledger_entries as l')
    .innerJoin('tasks as t', 't.id', 'l.task_id')
    .select([
      't.model',
      (eb) => eb.fn.countAll<number | string>().as('tasks'),
      (eb) => eb.fn.sum<number | string>('l.amount').as('credits'),
    ])
    .where('l.account_id', '=', accountId)
    .where('l.kind', '=', 'settle')
    .where('l.created_at', '>=', start)
    .where('l.created_at', '<', end)
    .groupBy('t.model')
    .orderBy('t.model')
    .execute();
  const balanceOf = (rows: { kind: string; total: number | string | null }[]) =>
    rows.reduce((sum, r) => sum + (BALANCE_SIGN[r.kind] ?? 0) * Number(r.total ?? 0), 0);
  const sumOf = (kind: string) => Number(within.find((r) => r.kind === kind)?.total ?? 0);
  const openingBalance = balanceOf(before);
  const refunded = sumOf('refund');
  const disputed = sumOf('dispute');
  const disputesWon = sumOf('dispute_won');
  const debtPaid = sumOf('debt_paid');
  return {
    month,
    openingBalance,
    purchases: { total: sumOf('purchase') + sumOf('grant'), paid: sumOf('purchase'), granted: sumOf('grant') },
    refunds: {
      total: refunded + disputed + debtPaid - disputesWon,
      refunded,
      disputed,
      disputesWon,
      debtPaid,
      debtIncurred: sumOf('debt'),
      debtForgiven: sumOf('debt_forgiven'),
    },
    charges: {
      total: sumOf('settle'),
      byModel: byModel.map((r) => ({ model: r.model, tasks: Number(r.tasks), credits: Number(r.credits ?? 0) })),
    },
    closingBalance: openingBalance + balanceOf(within),
  };
}

/** The statement as CSV: one `section,item,credits` line per figure, in the JSON's order. */
export function statementCsv(s: Statement): string {
  const lines = [
    csvLine(['section', 'item', 'credits']),
    csvLine(['openingBalance', '', s.openingBalance]),
    ...(['paid', 'granted', 'total'] as const).map((k) => csvLine(['purchases', k, s.purchases[k]])),
    ...(['refunded', 'disputed', 'disputesWon', 'debtPaid', 'debtIncurred', 'debtForgiven', 'total'] as const).map(
      (k) => csvLine(['refunds', k, s.refunds[k]]),
    ),
    ...s.charges.byModel.map((m) => csvLine(['charges', m.model, m.credits])),
    csvLine(['charges', 'total', s.charges.total]),
    csvLine(['closingBalance', '', s.closingBalance]),
  ];
  return lines.join('');
}
