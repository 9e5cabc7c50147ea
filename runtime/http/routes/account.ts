import type { Handlers } from '../../../generated/routes.js';
import { creditsToUsd } from '../../../generated/support.js';
import { ApiError } from '../../errors.js';
import type { ApiRequest } from '../api-request.js';

const DAY_MS = 24 * 3600 * 1000;

function parseDay(value: string | undefined, param: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00Z`) : Number.NaN;
  // Date.parse rolls impossible days over (2026-02-30 -> 2026-03-02): the day must read back unchanged.
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value) throw new ApiError('invalid_parameter', { param }, [], param);
  return ms;
}

export const accountHandlers: Pick<Handlers<ApiRequest>, 'getCredit' | 'getUsage'> = {
  async getCredit(req) {
    const wallet = await req.ctx.db.kysely.selectFrom('wallets').selectAll().where('account_id', '=', req.caller.accountId).executeTakeFirstOrThrow();
    const total = wallet.available + wallet.held;
    return {
      status: 200,
      data: {
        available: wallet.available,
        held: wallet.held,
        total,
        availableCost: creditsToUsd(wallet.available),
        heldCost: creditsToUsd(wallet.held),
        totalCost: creditsToUsd(total),
      },
      headers: { 'Cache-Control': 'no-store' },
    };
  },

  /** The calling key's tasks by UTC day and by model: counts and settled charges. Default: the last 30 days. */
  async getUsage(req) {
    const now = req.ctx.clock.now();
    const to = (parseDay(req.query('to'), 'to') ?? now - (now % DAY_MS)) + DAY_MS;
    const from = parseDay(req.query('from'), 'from') ?? to - 30 * DAY_MS;
    if (from >= to || to - from > 366 * DAY_MS) throw new ApiError('invalid_parameter', { param: 'from' }, [], 'from');
    const rows = await req.ctx.db.kysely
      .selectFrom('tasks')
      .select(['model', 'created_at', 'charged_credits', 'settled'])
      .where('api_key_id', '=', req.caller.keyId)
      .where('created_at', '>=', from)
      .where('created_at', '<', to)
      .execute();
    const byDay = new Map<string, { tasks: number; credits: number }>();
    const byModel = new Map<string, { tasks: number; credits: number }>();
    for (const row of rows) {
      const credits = row.settled === 1 ? (row.charged_credits ?? 0) : 0;
      const day = new Date(row.created_at).toISOString().slice(0, 10);
      for (const [map, key] of [[byDay, day], [byModel, row.model]] as const) {
        const entry = map.get(key) ?? { tasks: 0, credits: 0 };
        entry.tasks += 1;
        entry.credits += credits;
        map.set(key, entry);
      }
    }
    const sorted = <T>(map: Map<string, T>) => [...map.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
    return {
      status: 200,
      data: {
        byDay: sorted(byDay).map(([day, e]) => ({ day, tasks: e.tasks, credits: e.credits, cost: creditsToUsd(e.credits) })),
        byModel: sorted(byModel).map(([model, e]) => ({ model, tasks: e.tasks, credits: e.credits, cost: creditsToUsd(e.credits) })),
      },
    };
  },
};
