import { serviceForSuite } from '../support/suite-service.js';
import { describe, expect, it } from 'vitest';
import { codeMessage } from '../../generated/errors.js';
import { succeedTask } from '../../runtime/tasks/resolve-task.js';
import { bodyD, createTask, PRICE_D } from '../http/helpers.js';
import { mediaforgeJsonInProcess } from '../support/cli-process.js';
import { type TestService } from '../support/service.js';
import { signUp } from './support.js';

/**
 * The console's statement (issue 39): GET /console/api/statements/{month} answers the session
 * user's own API account's statement, equal to what GET /api/v1/statements/{month} answers for it,
 * and with format=csv the same CSV (the page's download link); a month not begun yet is refused
 * with 40044 in the user's language. (The service's clock deciding the current month, rather than
 * the machine's: test/http/statements.test.ts, on a manual clock.)
 */
const cli = (t: TestService, argv: string[]) => mediaforgeJsonInProcess(t.config.dbUrl, argv);

describe('console: statement', () => {
  const svc = serviceForSuite(undefined, {}, { startWorker: false });

  const month = () => new Date().toISOString().slice(0, 7);

  it('equals the API statement of the same account and month, and another user sees only its own', async () => {
    const user = await signUp(svc.t, 'statement@example.com');
    const { accountId } = (await user.call('GET', '/console/api/session')).body.data;
    await cli(svc.t, ['credits', 'add', '--account', accountId, '--credits', String(PRICE_D * 3)]);
    const { apiKey, keyId } = await cli(svc.t, ['keys', 'create', '--account', accountId]);
    await cli(svc.t, ['keys', 'scope', '--key', keyId, '--account-reports', 'on']);
    const task = await createTask(svc.t, apiKey, bodyD());
    expect(task.status).toBe(202);
    await succeedTask(svc.t.service.ctx, task.body.data.taskId, { outputs: [], outputSeconds: 5 });

    const fromConsole = await user.call('GET', `/console/api/statements/${month()}`);
    const fromApi = await svc.t.call('GET', `/api/v1/statements/${month()}`, { key: apiKey });
    expect(fromConsole.status).toBe(200);
    expect(fromApi.status).toBe(200);
    expect(fromConsole.body.data).toEqual(fromApi.body.data);
    expect(fromConsole.body.data.charges.total).toBeGreaterThan(0);

    // The download link of the page: a plain GET with the session cookie answers the API's CSV.
    const csv = await fetch(`${svc.t.url}/console/api/statements/${month()}?format=csv`, {
      headers: { cookie: user.cookie },
    });
    const apiCsv = await svc.t.call('GET', `/api/v1/statements/${month()}?format=csv`, { key: apiKey });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.headers.get('content-disposition')).toBe(`attachment; filename="statement-${month()}.csv"`);
    expect(await csv.text()).toBe(apiCsv.body);
    expect(apiCsv.body).toContain(`closingBalance,,${fromApi.body.data.closingBalance}\r\n`);

    const other = await signUp(svc.t, 'statement-other@example.com');
    const theirs = await other.call('GET', `/console/api/statements/${month()}`);
    expect(theirs.status).toBe(200);
    expect(theirs.body.data.charges).toEqual({ total: 0, byModel: [] });
    expect(theirs.body.data).not.toEqual(fromConsole.body.data);
  });

  it.each([['2026-13'], ['2026-00'], ['2026-1'], ['last-month']])('a bad month (%s) answers 400', async (bad) => {
    const user = await signUp(svc.t, `statement-bad-${bad}@example.com`);
    const r = await user.call('GET', `/console/api/statements/${bad}`);
    expect(r.status).toBe(400);
    expect(r.body.code).toBeGreaterThanOrEqual(40000);
    expect(JSON.stringify(r.body)).toContain('month');
  });

  it('a month after the current UTC month answers 400 40044 naming the month, in the user language, as JSON and as CSV', async () => {
    const user = await signUp(svc.t, 'statement-future@example.com');
    expect((await user.call('POST', '/console/api/settings', { language: 'ja' })).status).toBe(200);
    const now = new Date();
    const current = month();
    const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString().slice(0, 7);
    for (const future of [next, '2999-12']) {
      for (const query of ['', '?format=csv']) {
        const r = await user.call('GET', `/console/api/statements/${future}${query}`);
        expect([r.status, r.body.code, r.body.data]).toEqual([400, 40044, { param: 'month' }]);
        expect(r.body.msg).toBe(codeMessage('statement_month_future', 'ja', { month: future, current }));
      }
    }
    // The current month and one long before the account existed answer (zeros for the latter).
    expect((await user.call('GET', `/console/api/statements/${current}`)).status).toBe(200);
    const before = await user.call('GET', '/console/api/statements/2001-01');
    expect(before.status).toBe(200);
    expect(before.body.data).toMatchObject({ openingBalance: 0, closingBalance: 0, charges: { total: 0 } });
  });

  it('without a session answers 401', async () => {
    const r = await fetch(`${svc.t.url}/console/api/statements/${month()}`);
    expect(r.status).toBe(401);
  });
});
