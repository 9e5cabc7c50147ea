import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { succeedTask } from '../../runtime/tasks/resolve-task.js';
import { bodyD, createTask, PRICE_D } from '../http/helpers.js';
import { mediaforgeJsonInProcess } from '../support/cli-process.js';
import { startTestService, type TestService } from '../support/service.js';
import { signUp } from './support.js';

/**
 * The console's statement (issue 39): GET /console/api/statements/{month} answers the session
 * user's own API account's statement, equal to what GET /api/v1/statements/{month} answers for it.
 */
const cli = (t: TestService, argv: string[]) => mediaforgeJsonInProcess(t.config.dbUrl, argv);

describe('console: statement', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({}, { startWorker: false });
  });
  afterAll(async () => {
    await t?.close();
  });

  const month = () => new Date().toISOString().slice(0, 7);

  it('equals the API statement of the same account and month, and another user sees only its own', async () => {
    const user = await signUp(t, 'statement@example.com');
    const { accountId } = (await user.call('GET', '/console/api/session')).body.data;
    await cli(t, ['credits', 'add', '--account', accountId, '--credits', String(PRICE_D * 3)]);
    const { apiKey, keyId } = await cli(t, ['keys', 'create', '--account', accountId]);
    await cli(t, ['keys', 'scope', '--key', keyId, '--account-reports', 'on']);
    const task = await createTask(t, apiKey, bodyD());
    expect(task.status).toBe(202);
    await succeedTask(t.service.ctx, task.body.data.taskId, { outputs: [], outputSeconds: 5 });

    const fromConsole = await user.call('GET', `/console/api/statements/${month()}`);
    const fromApi = await t.call('GET', `/api/v1/statements/${month()}`, { key: apiKey });
    expect(fromConsole.status).toBe(200);
    expect(fromApi.status).toBe(200);
    expect(fromConsole.body.data).toEqual(fromApi.body.data);
    expect(fromConsole.body.data.charges.total).toBeGreaterThan(0);

    const other = await signUp(t, 'statement-other@example.com');
    const theirs = await other.call('GET', `/console/api/statements/${month()}`);
    expect(theirs.status).toBe(200);
    expect(theirs.body.data.charges).toEqual({ total: 0, byModel: [] });
    expect(theirs.body.data).not.toEqual(fromConsole.body.data);
  });

  it.each([['2026-13'], ['2026-00'], ['2026-1'], ['last-month']])('a bad month (%s) answers 400', async (bad) => {
    const user = await signUp(t, `statement-bad-${bad}@example.com`);
    const r = await user.call('GET', `/console/api/statements/${bad}`);
    expect(r.status).toBe(400);
    expect(r.body.code).toBeGreaterThanOrEqual(40000);
    expect(JSON.stringify(r.body)).toContain('month');
  });

  it('without a session answers 401', async () => {
    const r = await fetch(`${t.url}/console/api/statements/${month()}`);
    expect(r.status).toBe(401);
  });
});
