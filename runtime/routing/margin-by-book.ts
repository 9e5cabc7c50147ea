import type { Db } from '../storage/dialect.js';
import { microsToUsd } from './margin.js';

/** 1 credit = 0.01 USD = 10,000 millionths of a USD. */
const MICROS_PER_CREDIT = 10_000;

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
