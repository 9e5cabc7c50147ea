import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyD, createTask, PRICE_D } from '../http/helpers.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';
import { SilentDeployment, recordCounts } from './support.js';

/**
 * A deployment that accepts work and never answers a poll (the promise never settles). The
 * background worker must not stall on it: the task expires once at its deadline, the hold is
 * released once, and other work keeps flowing. (The late-result case lives in
 * test/http/tasks-lifecycle.test.ts.)
 */
describe('deadlines: a deployment that never answers', () => {
  let t: TestService;
  const silent = new SilentDeployment();
  beforeAll(async () => {
    t = await startTestService({ taskDeadlineMs: 1500 }, { deployments: [silent] });
  });
  afterAll(async () => {
    recordCounts('deadlines', { tasks: 6, hungPolls: silent.polls, violations: 0 });
    await t?.close();
  });

  it('expires every task once and releases each hold once, while polls hang', async () => {
    const { accountId, apiKey } = await t.account(6 * PRICE_D);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await createTask(t, apiKey, bodyD())).body.data.taskId);
    await new Promise((resolve) => setTimeout(resolve, 400));
    // Created while earlier polls hang: the worker still picks these up.
    for (let i = 0; i < 3; i++) ids.push((await createTask(t, apiKey, bodyD())).body.data.taskId);
    for (const id of ids) expect((await waitForTerminal(t, apiKey, id, 15_000)).state).toBe('expired');
    expect(silent.polls).toBeGreaterThan(0);
    expect(await t.wallet(accountId)).toMatchObject({ available: 6 * PRICE_D, held: 0, spent: 0 });
    const releases = await t.service.ctx.db.kysely
      .selectFrom('ledger_entries')
      .select('task_id')
      .where('account_id', '=', accountId)
      .where('kind', '=', 'release')
      .execute();
    expect(releases.map((r) => r.task_id).sort()).toEqual([...ids].sort());
    await t.checkLedger(accountId);
  }, 30_000);
});
