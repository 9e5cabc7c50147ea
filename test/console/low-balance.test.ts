import { serviceForSuite } from '../support/suite-service.js';
import { describe, expect, it } from 'vitest';
import { mediaforgeJsonInProcess } from '../support/cli-process.js';
import { type TestService } from '../support/service.js';
import { bodyD, createTask, PRICE_D } from '../http/helpers.js';
import { signUp } from './support.js';

/**
 * The low-balance alert's console side (issue 40, point 5): the threshold set through the console
 * operation (POST /console/api/settings), refused out of range with the field's path, and the
 * balance's `lowBalance` that shows the banner once available credits are below it.
 */
const cli = (t: TestService, argv: string[]) => mediaforgeJsonInProcess(t.config.dbUrl, argv);

describe('console: low-balance alert', () => {
  const svc = serviceForSuite(undefined, {}, { startWorker: false });

  it('sets the threshold, shows the balance low once a hold goes below it, and clears it', async () => {
    const user = await signUp(svc.t, 'low-balance@example.com');
    const { accountId } = (await user.call('GET', '/console/api/session')).body.data;
    await cli(svc.t, ['credits', 'add', '--account', accountId, '--credits', String(PRICE_D * 3)]);
    const { apiKey } = await cli(svc.t, ['keys', 'create', '--account', accountId]);
    const lowBalance = async () => (await user.call('GET', '/console/api/balance')).body.data.lowBalance;

    expect(await lowBalance()).toEqual({ thresholdCredits: null, low: false });
    const set = await user.call('POST', '/console/api/settings', { lowBalanceCredits: PRICE_D * 2 + 1 });
    expect([set.status, set.body.data.lowBalanceCredits]).toEqual([200, PRICE_D * 2 + 1]);
    expect(await lowBalance()).toEqual({ thresholdCredits: PRICE_D * 2 + 1, low: false });

    expect((await createTask(svc.t, apiKey, bodyD())).status).toBe(202);
    expect(await lowBalance()).toEqual({ thresholdCredits: PRICE_D * 2 + 1, low: true });

    for (const bad of [0, -5, 1.5, 'ten'])
      expect(await user.call('POST', '/console/api/settings', { lowBalanceCredits: bad })).toMatchObject({
        status: 400,
        body: { code: 40001, data: { errors: [expect.objectContaining({ path: 'lowBalanceCredits' })] } },
      });
    expect((await lowBalance()).thresholdCredits).toBe(PRICE_D * 2 + 1);

    const cleared = await user.call('POST', '/console/api/settings', { lowBalanceCredits: null });
    expect([cleared.status, cleared.body.data.lowBalanceCredits]).toEqual([200, null]);
    expect(await lowBalance()).toEqual({ thresholdCredits: null, low: false });

    // The operator's CLI sets the same threshold, audited.
    expect(await cli(svc.t, ['accounts', 'set', '--account', accountId, '--low-balance', '500'])).toMatchObject({
      lowBalanceCredits: 500,
    });
    expect(await lowBalance()).toEqual({ thresholdCredits: 500, low: true });
    const audit = await svc.t.service.ctx.db.kysely
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'account.set')
      .where('target', '=', accountId)
      .execute();
    expect(audit.map((row) => JSON.parse(String(row.details)))).toEqual([{ lowBalanceCredits: 500 }]);
  });
});
