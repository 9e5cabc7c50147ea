import type { Executor } from '../storage/executor.js';

/**
 * The charged tasks of a period, for the operator's usage export (runtime/reports/usage-export.ts):
 * read page by page after (finished_at, id), a row comparison both engines answer from
 * tasks_by_finish (migration 0028), so a year of a busy service streams in bounded memory.
 */
export interface BilledTask {
  id: string;
  account_id: string;
  api_key_id: string;
  model: string;
  created_at: number;
  started_at: number | null;
  finished_at: number;
  billed_seconds: number | null;
  charged_credits: number;
}

const PAGE = 1000;

/** The charged tasks that finished in [from, to), oldest first, PAGE rows per query. */
export async function* billedTasks(db: Executor, from: number, to: number): AsyncGenerator<BilledTask[]> {
  let after: { finished: number; id: string } | undefined;
  for (;;) {
    let query = db
      .selectFrom('tasks')
      .select([
        'id',
        'account_id',
        'api_key_id',
        'model',
        'created_at',
        'started_at',
        'finished_at',
        'billed_seconds',
        'charged_credits',
      ])
      .where('settled', '=', 1)
      .where('charged_credits', '>', 0)
      .where('finished_at', '>=', from)
      .where('finished_at', '<', to);
    if (after) {
      const { finished, id } = after;
      // A row comparison, which both engines answer from tasks_by_finish (migration 0028).
      query = query.where((eb) => eb(eb.refTuple('finished_at', 'id'), '>', eb.tuple(finished, id)));
    }
    const rows = await query.orderBy('finished_at').orderBy('id').limit(PAGE).execute();
    if (rows.length === 0) return;
    const page = rows.map((r) => ({
      ...r,
      created_at: Number(r.created_at),
      started_at: r.started_at === null ? null : Number(r.started_at),
      finished_at: Number(r.finished_at),
      billed_seconds: r.billed_seconds === null ? null : Number(r.billed_seconds),
      charged_credits: Number(r.charged_credits),
    }));
    yield page;
    if (rows.length < PAGE) return;
    const last = page[page.length - 1]!;
    after = { finished: last.finished_at, id: last.id };
  }
}
