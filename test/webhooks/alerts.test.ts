import { storedRows } from '../support/stored-rows.js';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../runtime/clock.js';
import { addEndpoint } from '../../runtime/webhooks/admin.js';
import { mediaforgeJsonInProcess } from '../support/cli-process.js';
import { eventually } from '../support/eventually.js';
import { startTestService, type TestService } from '../support/service.js';
import { bodyD, createTask, PRICE_D } from '../http/helpers.js';
import { LOOPBACK, serviceAndReceiverForSuite, startReceiver } from './support.js';

/**
 * Alerts (issue 40, point 5): `account.balance_low` and `key.budget_threshold`, sent through the
 * account's Standard Webhooks endpoints that subscribed to them, once per crossing, received by a
 * real receiver and verified with the standardwebhooks package.
 */

const cli = (t: TestService, argv: string[]) => mediaforgeJsonInProcess(t.config.dbUrl, argv);
/** A key of the account spending at most `budget` (credits/period), made as an operator makes one. */
const keyWithBudget = (t: TestService, accountId: string, budget: string) =>
  cli(t, ['keys', 'create', '--account', accountId, '--budget', budget]);
const policy = { allowPrivate: true, allowInsecure: true };
/** The data of every delivery written for the account (its alerts here), oldest first. */
async function alertData(t: TestService, accountId: string): Promise<any[]> {
  const rows = await storedRows(t, 'webhook_deliveries', { account_id: accountId }, 'created_at');
  return rows.map((d) => JSON.parse(d.body).data);
}

describe('alerts', { timeout: 60_000 }, () => {
  const suite = serviceAndReceiverForSuite();

  async function endpoint(accountId: string, name: string, events: string) {
    const url = `${suite.receiver.url}${suite.receiver.url.includes('?') ? '&' : '?'}endpoint=${name}`;
    return addEndpoint(suite.t.service.ctx.db, { accountId, url, events, policy, now: Date.now() });
  }

  /** The verified payloads an endpoint received, of one event type. */
  function received(name: string, secret: string, type: string): any[] {
    return suite.receiver.requests
      .filter((r) => new URL(r.path, 'http://x').searchParams.get('endpoint') === name)
      .map((r) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as any)
      .filter((payload) => payload.type === type);
  }

  /** Every alert delivery written for the account: all of them are written before createTask answers. */
  async function alertDeliveries(accountId: string) {
    return suite.t.service.ctx.db.kysely
      .selectFrom('webhook_deliveries')
      .select(['endpoint_id', 'event_type'])
      .where('account_id', '=', accountId)
      .where('event_type', 'in', ['account.balance_low', 'key.budget_threshold'])
      .execute();
  }

  it('account.balance_low: once under 20 concurrent createTask, not to an endpoint that did not opt in, again after a grant', async () => {
    const { accountId, apiKey } = await suite.t.account(1000);
    const set = await cli(suite.t, ['accounts', 'set', '--account', accountId, '--low-balance', '800']);
    expect(set).toMatchObject({ accountId, lowBalanceCredits: 800 });
    const alerts = await endpoint(accountId, 'bal-alerts', 'account.balance_low');
    const tasksOnly = await endpoint(accountId, 'bal-tasks', 'task.succeeded,task.completed');

    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => createTask(suite.t, apiKey, bodyD(`p${i}`))),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(202));
    const first = await eventually(
      () =>
        received('bal-alerts', alerts.secret, 'account.balance_low').length === 1 &&
        received('bal-alerts', alerts.secret, 'account.balance_low'),
      'the balance alert',
    );
    expect(first[0].data).toMatchObject({ accountId, thresholdCredits: 800 });
    expect(first[0].data.availableCredits).toBeLessThan(800);
    expect(await alertDeliveries(accountId)).toEqual([
      { endpoint_id: alerts.endpointId, event_type: 'account.balance_low' },
    ]);

    // Hovering below the line: released and held again, nothing more is sent.
    expect((await createTask(suite.t, apiKey, bodyD('hover'))).status).toBe(202);
    expect(await alertDeliveries(accountId)).toHaveLength(1);

    // A grant re-arms it: the next hold below the line sends it again.
    await cli(suite.t, ['credits', 'add', '--account', accountId, '--credits', '50']);
    expect((await createTask(suite.t, apiKey, bodyD('after the grant'))).status).toBe(202);
    await eventually(
      () => received('bal-alerts', alerts.secret, 'account.balance_low').length === 2,
      'the second balance alert',
    );
    expect(await alertDeliveries(accountId)).toHaveLength(2);
    // The endpoint that named only task events got task events, and no alert.
    await eventually(
      () => suite.receiver.requests.filter((r) => r.path.includes('endpoint=bal-tasks')).length >= 22,
      'the task events',
    );
    expect(
      suite.receiver.requests
        .filter((r) => r.path.includes('endpoint=bal-tasks'))
        .map((r) => (new Webhook(tasksOnly.secret).verify(r.body, r.headers as Record<string, string>) as any).type)
        .filter((type) => !type.startsWith('task.')),
    ).toEqual([]);
    await suite.t.checkLedger(accountId);
  });

  it('key.budget_threshold: 80 % and 100 % once each under 20 concurrent createTask on a budget of ten', async () => {
    const { accountId } = await suite.t.account(100_000);
    const { apiKey, keyId } = await keyWithBudget(suite.t, accountId, `${PRICE_D * 10}/month`);
    const alerts = await endpoint(accountId, 'budget-alerts', 'key.budget_threshold');
    await endpoint(accountId, 'budget-none', 'task.failed');

    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => createTask(suite.t, apiKey, bodyD(`b${i}`))),
    );
    expect(answers.filter((a) => a.status === 202)).toHaveLength(10);
    const payloads = await eventually(
      () =>
        received('budget-alerts', alerts.secret, 'key.budget_threshold').length === 2 &&
        received('budget-alerts', alerts.secret, 'key.budget_threshold'),
      'two budget alerts',
    );
    expect(payloads.map((p) => p.data.thresholdPercent).sort()).toEqual([100, 80]);
    for (const payload of payloads)
      expect(payload.data).toMatchObject({ accountId, keyId, budgetCredits: PRICE_D * 10, period: 'month' });
    expect((await alertDeliveries(accountId)).map((d) => [d.endpoint_id, d.event_type])).toEqual([
      [alerts.endpointId, 'key.budget_threshold'],
      [alerts.endpointId, 'key.budget_threshold'],
    ]);
  });
});

describe('alerts: a budget threshold re-arms with the next period', () => {
  let t: TestService;
  const clock = new ManualClock(Date.UTC(2026, 0, 7, 12));
  beforeAll(async () => {
    t = await startTestService({ ...LOOPBACK }, { clock, startWorker: false });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('80 % of a daily budget: once on the first day, once more the next day', async () => {
    const { accountId } = await t.account(100_000);
    const { apiKey } = await keyWithBudget(t, accountId, `${PRICE_D * 5}/day`);
    const receiver = await startReceiver();
    try {
      await addEndpoint(t.service.ctx.db, {
        accountId,
        url: receiver.url,
        events: 'key.budget_threshold',
        policy,
        now: clock.now(),
      });
      const sent = async () => (await alertData(t, accountId)).map((data) => [data.thresholdPercent, data.periodStart]);
      for (let i = 0; i < 4; i++) expect((await createTask(t, apiKey, bodyD(`d1-${i}`))).status).toBe(202);
      expect(await sent()).toEqual([[80, '2026-01-07T00:00:00.000Z']]);
      clock.set(Date.UTC(2026, 0, 8, 0, 0, 1));
      for (let i = 0; i < 3; i++) expect((await createTask(t, apiKey, bodyD(`d2-${i}`))).status).toBe(202);
      expect(await sent()).toHaveLength(1);
      expect((await createTask(t, apiKey, bodyD('d2-3'))).status).toBe(202);
      expect(await sent()).toEqual([
        [80, '2026-01-07T00:00:00.000Z'],
        [80, '2026-01-08T00:00:00.000Z'],
      ]);
    } finally {
      await receiver.close();
    }
  });
  it('thresholds set with the policy (--budget-alerts 50): only those are sent, and keys/current shows them', async () => {
    const { accountId } = await t.account(100_000);
    const { apiKey, keyId } = await keyWithBudget(t, accountId, `${PRICE_D * 10}/day`);
    await cli(t, ['keys', 'set', '--key', keyId, '--budget-alerts', '50%,30']);
    const current = await t.call('GET', '/api/v1/keys/current', { key: apiKey });
    expect(current.body.data.budget.alerts).toEqual([30, 50]);
    await addEndpoint(t.service.ctx.db, {
      accountId,
      url: 'http://127.0.0.1:9/alerts',
      events: 'key.budget_threshold',
      policy,
      now: clock.now(),
    });
    for (let i = 0; i < 10; i++) expect((await createTask(t, apiKey, bodyD(`c-${i}`))).status).toBe(202);
    // Both deliveries are written at the same time of the suite's clock (it stands still), so
    // created_at does not order them, and PostgreSQL returns such ties in no set order.
    const percents = (await alertData(t, accountId)).map((data) => data.thresholdPercent as number);
    expect(percents.sort((a, b) => a - b)).toEqual([30, 50]);
  });
});
