import type { Handlers } from '../../../generated/routes.js';
import { requireAccountReports } from '../../reports/report-scope.js';
import { refuseFutureMonth, statementCsv, statementOf } from '../../reports/statement.js';
import type { ApiRequests } from '../api-request.js';
import { csvReply } from './csv-reply.js';

export const statementHandlers: Pick<Handlers<ApiRequests>, 'getStatement'> = {
  /**
   * The account's statement for a UTC month (runtime/reports/statement.ts); the key needs the
   * account-reports scope. A month not begun yet is refused first: it is the request's value at
   * fault, and validation comes before key policy (docs/contracts.md).
   */
  async getStatement(req) {
    refuseFutureMonth(req.params.month, req.ctx.clock.now());
    const db = req.ctx.db.kysely;
    await requireAccountReports(db, req.caller.keyId);
    const statement = await statementOf(db, req.caller.accountId, req.params.month);
    if (req.query.format === 'csv') return csvReply(statementCsv(statement), `statement-${statement.month}.csv`);
    return { status: 200, data: statement, headers: { 'Cache-Control': 'no-store' } };
  },
};
