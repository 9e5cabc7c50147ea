import type { Handlers } from '../../../generated/routes.js';
import { creditsToUsd } from '../../../generated/support.js';
import { ApiError } from '../../errors.js';
import { usageRows } from '../../tasks/task-rows.js';
import { requireAccountReports } from '../../reports/report-scope.js';
import { usageCsv, usageReport } from '../../reports/usage-report.js';
import { csvReply } from './csv-reply.js';
import { keyPolicyState } from '../../accounts/key-policy-state.js';
import type { ApiRequests } from '../api-request.js';

const DAY_MS = 24 * 3600 * 1000;

/** A day the contract's `format: date` has already checked (it refuses 2026-02-30), as its UTC midnight. */
function dayStart(value: string | undefined): number | undefined {
  return value === undefined ? undefined : Date.parse(`${value}T00:00:00Z`);
}

export const accountHandlers: Pick<Handlers<ApiRequests>, 'getCredit' | 'getUsage' | 'getCurrentKey'> = {
  async getCredit(req) {
    const wallet = await req.ctx.ledger.balance(req.ctx.db, req.caller.accountId);
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

  /** The calling key's policy and what is left of its budget in the current UTC period (issue 40). */
  async getCurrentKey(req) {
    const { ctx, caller } = req;
    return {
      status: 200,
      data: {
        keyId: caller.keyId,
        workspace: caller.workspace,
        ...(await keyPolicyState(ctx.db.kysely, caller.keyId, caller.policy, ctx.clock.now())),
      },
      headers: { 'Cache-Control': 'no-store' },
    };
  },

  /**
   * The calling key's tasks (or, `scope=account` with the key's account-reports scope, every key's of
   * its account) by UTC day and by model: counts and settled charges. Default: the last 30 days.
   */
  async getUsage(req) {
    const now = req.ctx.clock.now();
    const to = (dayStart(req.query.to) ?? now - (now % DAY_MS)) + DAY_MS;
    const from = dayStart(req.query.from) ?? to - 30 * DAY_MS;
    // A rule across two parameters, which the contract cannot state: the range is ordered and at most 366 days.
    if (from >= to || to - from > 366 * DAY_MS) throw new ApiError('invalid_parameter', { param: 'from' });
    const db = req.ctx.db.kysely;
    const account = req.query.scope === 'account';
    if (account) await requireAccountReports(db, req.caller.keyId);
    const rows = await usageRows(
      db,
      account ? { accountIds: [req.caller.accountId] } : { keyId: req.caller.keyId },
      from,
      to,
    );
    const report = usageReport(rows);
    if (req.query.format === 'csv') return csvReply(usageCsv(report), 'usage.csv');
    return { status: 200, data: report };
  },
};
