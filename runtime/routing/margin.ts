import type { Db } from '../storage/dialect.js';

/** 1 credit = 0.01 USD = 10,000 millionths of a USD. */
const MICROS_PER_CREDIT = 10_000;

export interface MarginRow {
  model: string;
  deployment: string;
  /** Tasks that ended on this deployment (any terminal state). */
  tasks: number;
  succeeded: number;
  /** What callers were charged, in credits. */
  revenueCredits: number;
  revenueUsd: string;
  /** What the operator pays the upstream, as declared in the deployments file (tasks without a declared cost count 0). */
  upstreamCostUsd: string;
  marginUsd: string;
  /**
   * What the operator pays for jobs no client was charged for (part of upstreamCostUsd): completed
   * jobs of tasks that ended otherwise (expired, canceled, failed after the job), learned while
   * polling or by reconciliation (runtime/worker/reconcile.ts).
   */
  abandonedCostUsd: string;
  /** Succeeded tasks whose deployment declared no cost: the margin overstates by what they cost. */
  succeededWithoutCost: number;
  /**
   * Tasks whose submit had an unknown outcome on a protocol without an idempotency key (issue 37):
   * a job may run that no client pays for, not yet found and reconciled, nor found absent
   * (runtime/worker/unknown-submit.ts). Not part of upstreamCostUsd: what such jobs would cost,
   * as declared for the request, is possiblyAbandonedCostUsd (those without a declared cost count 0).
   */
  possiblyAbandoned: number;
  possiblyAbandonedCostUsd: string;
}

export interface MarginReport {
  since: string | null;
  rows: MarginRow[];
  totals: Omit<MarginRow, 'model' | 'deployment'>;
}

/** Millionths of a USD as a decimal text with six places ("-1.250000"), without floating point. */
export function microsToUsd(micros: number): string {
  const sign = micros < 0 ? '-' : '';
  const abs = Math.abs(micros);
  return `${sign}${(abs - (abs % 1_000_000)) / 1_000_000}.${String(abs % 1_000_000).padStart(6, '0')}`;
}

interface Sums {
  tasks: number;
  succeeded: number;
  revenueCredits: number;
  costMicros: number;
  abandonedMicros: number;
  succeededWithoutCost: number;
  possiblyAbandoned: number;
  possiblyAbandonedMicros: number;
}

function row(sums: Sums) {
  const revenueMicros = sums.revenueCredits * MICROS_PER_CREDIT;
  return {
    tasks: sums.tasks,
    succeeded: sums.succeeded,
    revenueCredits: sums.revenueCredits,
    revenueUsd: microsToUsd(revenueMicros),
    upstreamCostUsd: microsToUsd(sums.costMicros),
    marginUsd: microsToUsd(revenueMicros - sums.costMicros),
    abandonedCostUsd: microsToUsd(sums.abandonedMicros),
    succeededWithoutCost: sums.succeededWithoutCost,
    possiblyAbandoned: sums.possiblyAbandoned,
    possiblyAbandonedCostUsd: microsToUsd(sums.possiblyAbandonedMicros),
  };
}

/** The raw sums per model and deployment of the tasks that ended since `since` (Unix ms), for the report and /metrics. */
export async function marginSums(
  db: Db['kysely'],
  since?: number,
): Promise<{ model: string; deployment: string; sums: Sums }[]> {
  const rows = await db
    .selectFrom('tasks')
    .select((eb) => {
      // A job an unknown submit may have made: not found with a cost, nor found ended without one, nor absent.
      const possiblyAbandoned = eb.and([
        eb('unknown_submit_at', 'is not', null),
        eb('upstream_cost_micros', 'is', null),
        eb.or([eb('upstream_final_state', 'is', null), eb('upstream_final_state', '=', 'unresolved')]),
      ]);
      return [
        'model',
        'deployment',
        eb.fn.countAll<number>().as('tasks'),
        eb.fn.sum<number>(eb.case().when('state', '=', 'succeeded').then(1).else(0).end()).as('succeeded'),
        eb.fn.sum<number>(eb.fn.coalesce('charged_credits', eb.lit(0))).as('revenue'),
        eb.fn.sum<number>(eb.fn.coalesce('upstream_cost_micros', eb.lit(0))).as('cost'),
        eb.fn
          .sum<number>(
            eb
              .case()
              .when('state', '!=', 'succeeded')
              .then(eb.fn.coalesce('upstream_cost_micros', eb.lit(0)))
              .else(0)
              .end(),
          )
          .as('abandoned'),
        eb.fn
          .sum<number>(
            eb
              .case()
              .when(eb.and([eb('state', '=', 'succeeded'), eb('upstream_cost_micros', 'is', null)]))
              .then(1)
              .else(0)
              .end(),
          )
          .as('uncosted'),
        eb.fn.sum<number>(eb.case().when(possiblyAbandoned).then(1).else(0).end()).as('possibly'),
        eb.fn
          .sum<number>(
            eb
              .case()
              .when(possiblyAbandoned)
              .then(eb.fn.coalesce('unknown_submit_cost_micros', eb.lit(0)))
              .else(0)
              .end(),
          )
          .as('possiblyCost'),
      ];
    })
    .where('deployment', 'is not', null)
    .where('finished_at', 'is not', null)
    .$if(since !== undefined, (q) => q.where('finished_at', '>=', since!))
    .groupBy(['model', 'deployment'])
    .orderBy('model')
    .orderBy('deployment')
    .execute();
  return rows.map((r) => ({
    model: r.model,
    deployment: r.deployment!,
    sums: {
      tasks: Number(r.tasks),
      succeeded: Number(r.succeeded),
      revenueCredits: Number(r.revenue),
      costMicros: Number(r.cost),
      abandonedMicros: Number(r.abandoned),
      succeededWithoutCost: Number(r.uncosted),
      possiblyAbandoned: Number(r.possibly),
      possiblyAbandonedMicros: Number(r.possiblyCost),
    },
  }));
}

/** `mediaforge report margin`: revenue against upstream cost per model and deployment, and in all. */
export async function marginReport(db: Db['kysely'], since?: number): Promise<MarginReport> {
  const groups = await marginSums(db, since);
  const total: Sums = {
    tasks: 0,
    succeeded: 0,
    revenueCredits: 0,
    costMicros: 0,
    abandonedMicros: 0,
    succeededWithoutCost: 0,
    possiblyAbandoned: 0,
    possiblyAbandonedMicros: 0,
  };
  for (const { sums } of groups) for (const key of Object.keys(total) as (keyof Sums)[]) total[key] += sums[key];
  return {
    since: since === undefined ? null : new Date(since).toISOString(),
    rows: groups.map((g) => ({ model: g.model, deployment: g.deployment, ...row(g.sums) })),
    totals: row(total),
  };
}

/** The margin of the tasks accepted under one price book (`default`: the published prices). */
export interface BookMarginRow {
  book: string;
  tasks: number;
  revenueCredits: number;
  revenueUsd: string;
  upstreamCostUsd: string;
  marginUsd: string;
}

/** A book that charged a model less than the upstream cost its deployments declared for the same tasks. */
export interface BelowCostWarning {
  book: string;
  model: string;
  /** Succeeded tasks with a declared cost: the ones compared. */
  tasks: number;
  revenueUsd: string;
  upstreamCostUsd: string;
}

/**
 * `mediaforge report margin`'s part by price book (issue 40): revenue against declared upstream
 * cost per book (tasks.price_book, the book each task was accepted under), and a warning for each
 * book and model whose succeeded, costed tasks were charged less than they cost: a book priced
 * below cost is a loss on every task, which the per-deployment rows would average away.
 */
export async function marginByBook(
  db: Db['kysely'],
  since?: number,
): Promise<{ books: BookMarginRow[]; belowCost: BelowCostWarning[] }> {
  const rows = await db
    .selectFrom('tasks')
    .select((eb) => {
      const costed = eb.and([eb('state', '=', 'succeeded'), eb('upstream_cost_micros', 'is not', null)]);
      return [
        'price_book',
        'model',
        eb.fn.countAll<number>().as('tasks'),
        eb.fn.sum<number>(eb.fn.coalesce('charged_credits', eb.lit(0))).as('revenue'),
        eb.fn.sum<number>(eb.fn.coalesce('upstream_cost_micros', eb.lit(0))).as('cost'),
        eb.fn.sum<number>(eb.case().when(costed).then(1).else(0).end()).as('costedTasks'),
        eb.fn
          .sum<number>(
            eb
              .case()
              .when(costed)
              .then(eb.fn.coalesce('charged_credits', eb.lit(0)))
              .else(0)
              .end(),
          )
          .as('costedRevenue'),
        eb.fn.sum<number>(eb.case().when(costed).then(eb.ref('upstream_cost_micros')).else(0).end()).as('costedCost'),
      ];
    })
    .where('deployment', 'is not', null)
    .where('finished_at', 'is not', null)
    .$if(since !== undefined, (q) => q.where('finished_at', '>=', since!))
    .groupBy(['price_book', 'model'])
    .orderBy('price_book')
    .orderBy('model')
    .execute();
  const byBook = new Map<string, { tasks: number; revenue: number; cost: number }>();
  const belowCost: BelowCostWarning[] = [];
  for (const r of rows) {
    const book = r.price_book ?? 'default';
    const sums = byBook.get(book) ?? { tasks: 0, revenue: 0, cost: 0 };
    sums.tasks += Number(r.tasks);
    sums.revenue += Number(r.revenue);
    sums.cost += Number(r.cost);
    byBook.set(book, sums);
    const revenueMicros = Number(r.costedRevenue) * MICROS_PER_CREDIT;
    if (Number(r.costedTasks) > 0 && revenueMicros < Number(r.costedCost))
      belowCost.push({
        book,
        model: r.model,
        tasks: Number(r.costedTasks),
        revenueUsd: microsToUsd(revenueMicros),
        upstreamCostUsd: microsToUsd(Number(r.costedCost)),
      });
  }
  return {
    books: [...byBook].map(([book, s]) => ({
      book,
      tasks: s.tasks,
      revenueCredits: s.revenue,
      revenueUsd: microsToUsd(s.revenue * MICROS_PER_CREDIT),
      upstreamCostUsd: microsToUsd(s.cost),
      marginUsd: microsToUsd(s.revenue * MICROS_PER_CREDIT - s.cost),
    })),
    belowCost,
  };
}
