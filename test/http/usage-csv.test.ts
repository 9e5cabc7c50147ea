import { Mediaforge, PermissionDeniedError } from '@mediaforge/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaforgeJsonInProcess } from '../support/cli-process.js';
import { ManualClock } from '../../runtime/clock.js';
import { succeedTask } from '../../runtime/tasks/resolve-task.js';
import { startTestService, type TestService } from '../support/service.js';
import { bodyD, createTask, expectError, MODEL_D, MODEL_MINI, PRICE_D, bodyMini } from './helpers.js';

/**
 * GET /api/v1/usage (issue 39): `scope=account` counts every key of the account (the key needs the
 * account-reports scope), `format=csv` says what the JSON says.
 */

const cli = (t: TestService, argv: string[]) => mediaforgeJsonInProcess(t.config.dbUrl, argv);

/** The usage CSV read back into the JSON's shape. */
function usageFromCsv(csv: string) {
  const lines = csv.trimEnd().split('\r\n');
  expect(lines[0]).toBe('section,key,tasks,credits,cost');
  const report: { byDay: unknown[]; byModel: unknown[] } = { byDay: [], byModel: [] };
  for (const line of lines.slice(1)) {
    const [section, key, tasks, credits, cost] = line.split(',') as [string, string, string, string, string];
    const entry = { tasks: Number(tasks), credits: Number(credits), cost };
    if (section === 'day') report.byDay.push({ day: key, ...entry });
    else report.byModel.push({ model: key, ...entry });
  }
  return report;
}

const MINI_BODY = bodyMini(5);

describe('usage: csv and account scope', () => {
  let t: TestService;
  const clock = new ManualClock(Date.UTC(2026, 2, 10, 12));
  let reporting: string;
  let other: string;
  let unscoped: string;
  beforeAll(async () => {
    t = await startTestService({}, { clock, startWorker: false });
    const { accountId, apiKey } = await t.account(10_000);
    unscoped = apiKey;
    const created = await cli(t, ['keys', 'create', '--account', accountId]);
    await cli(t, ['keys', 'scope', '--key', created.keyId, '--account-reports', 'on']);
    reporting = created.apiKey;
    other = await t.siblingKey(accountId);
    // The reporting key: one task of family_d settled on 10 March; the other key: one mini task on 11 March.
    const a = await createTask(t, reporting, bodyD());
    expect(a.status).toBe(202);
    await succeedTask(t.service.ctx, a.body.data.taskId, { outputs: [], outputSeconds: 5 });
    clock.set(Date.UTC(2026, 2, 11, 9));
    const b = await createTask(t, other, MINI_BODY);
    expect(b.status).toBe(202);
    await succeedTask(t.service.ctx, b.body.data.taskId, { outputs: [], outputSeconds: 5 });
    // A third key of another account never shows.
    const stranger = await t.account(1000);
    expect((await createTask(t, stranger.apiKey, bodyD())).status).toBe(202);
  });
  afterAll(async () => {
    await t?.close();
  });

  const range = 'from=2026-03-01&to=2026-03-31';

  it.each([
    ['the calling key (default)', '', [MODEL_D]],
    ['the calling key (scope=key)', '&scope=key', [MODEL_D]],
    ['every key of the account', '&scope=account', [MODEL_D, MODEL_MINI]],
  ])('%s: the JSON counts its tasks, the CSV says the same', async (_name, scope, models) => {
    const json = await t.call('GET', `/api/v1/usage?${range}${scope}`, { key: reporting });
    expect(json.status, JSON.stringify(json.body)).toBe(200);
    expect(json.body.data.byModel.map((m: { model: string }) => m.model)).toEqual([...models].sort());
    expect(json.body.data.byModel.find((m: { model: string }) => m.model === MODEL_D)).toMatchObject({
      tasks: 1,
      credits: PRICE_D,
    });
    const csv = await t.call('GET', `/api/v1/usage?${range}${scope}&format=csv`, { key: reporting });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(usageFromCsv(csv.body)).toEqual(json.body.data);
  });

  it('scope=account needs the key scope, off by default: 403 40301', async () => {
    expectError(await t.call('GET', `/api/v1/usage?${range}&scope=account`, { key: unscoped }), 403, 40301);
    expectError(await t.call('GET', `/api/v1/usage?${range}&scope=account&format=csv`, { key: other }), 403, 40301);
    // Its own usage stays open to every key.
    expect((await t.call('GET', `/api/v1/usage?${range}&format=csv`, { key: other })).status).toBe(200);
  });

  it.each([
    ['format', 'format=xml'],
    ['scope', 'scope=everyone'],
  ])('a bad %s answers 400 naming it', async (param, query) => {
    const r = await t.call('GET', `/api/v1/usage?${range}&${query}`, { key: reporting });
    expectError(r, 400, 40008);
    expect(r.body.data).toEqual({ param });
  });

  it('the TypeScript client reads the statement and the usage, as JSON and as CSV', async () => {
    const client = new Mediaforge({ apiKey: reporting, baseUrl: t.url, maxRetries: 0 });
    const query = { from: '2026-03-01', to: '2026-03-31', scope: 'account' as const };
    const usage = await client.usage.get(query);
    expect(usage.byModel.map((m) => m.model)).toEqual([MODEL_D, MODEL_MINI].sort());
    expect(usageFromCsv(await client.usage.csv(query))).toEqual(usage);
    const statement = await client.statements.get('2026-03');
    expect(statement).toMatchObject({ month: '2026-03', openingBalance: 0, purchases: { total: 0 } });
    expect(statement.charges.total).toBe(usage.byModel.reduce((sum, m) => sum + m.credits, 0));
    const csv = await client.statements.csv('2026-03');
    expect(csv.split('\r\n')).toContain(`charges,total,${statement.charges.total}`);
    const denied = new Mediaforge({ apiKey: unscoped, baseUrl: t.url, maxRetries: 0 });
    await expect(denied.statements.get('2026-03')).rejects.toBeInstanceOf(PermissionDeniedError);
    await expect(denied.usage.csv(query)).rejects.toMatchObject({ status: 403, code: 40301 });
  });
});
