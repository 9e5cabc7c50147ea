import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultResolutionHooks } from '../../runtime/service.js';
import type { ResolutionHook } from '../../runtime/tasks/resolve-task.js';
import { expireTask, failTask, succeedTask } from '../../runtime/tasks/resolve-task.js';
import { bodyD, createTask, expectOk, PRICE_D, recordInfo } from '../http/helpers.js';
import { startTestService, type HttpResult, type TestService } from '../support/service.js';

/**
 * Resolutions of one moment (on SQLite, one commit: each in its own savepoint, answered after the
 * COMMIT). One whose transaction fails (here a resolution hook that throws for its task) leaves its
 * task open with its hold and no delivery row, and takes nothing from the others: each of those is
 * resolved once, its hold settled or released, its delivery row written.
 */
const refusedTasks = new Set<string>();
/** Requests sent from inside a task's resolution, while its transaction is open; refused after them. */
const probedTasks = new Map<string, () => Promise<unknown>>();
const refusingHook: ResolutionHook = async (_trx, task) => {
  const probe = probedTasks.get(task.id);
  if (probe) await probe();
  if (refusedTasks.has(task.id) || probe) throw new Error(`refused ${task.id}`);
};

describe('tasks resolved together', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService(
      { simulatorLatencyMs: 600_000, webhookAllowPrivate: true, webhookAllowInsecure: true },
      { startWorker: false, resolutionHooks: [...defaultResolutionHooks, refusingHook] },
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  const resolutions = {
    succeed: (taskId: string) => succeedTask(t.service.ctx, taskId, { outputs: [], outputSeconds: 5 }),
    fail: (taskId: string) => failTask(t.service.ctx, taskId, 'generation_failed', 'boom'),
    expire: (taskId: string) => expireTask(t.service.ctx, taskId),
  };
  type Step = { resolve: keyof typeof resolutions; refused: boolean; want: string };
  const cases: [string, { given: Step[] }][] = [
    [
      'a refused resolution among settled, failed and expired ones',
      {
        given: [
          { resolve: 'succeed', refused: false, want: 'succeeded' },
          { resolve: 'fail', refused: false, want: 'failed' },
          { resolve: 'succeed', refused: true, want: 'queued' },
          { resolve: 'expire', refused: false, want: 'expired' },
          { resolve: 'succeed', refused: false, want: 'succeeded' },
        ],
      },
    ],
    [
      'every resolution of the moment refused',
      {
        given: [
          { resolve: 'fail', refused: true, want: 'queued' },
          { resolve: 'succeed', refused: true, want: 'queued' },
        ],
      },
    ],
  ];

  it.each(cases)('%s', async (_name, { given }) => {
    const { accountId, apiKey } = await t.account(PRICE_D * given.length);
    const callBackUrl = 'http://127.0.0.1:9/hooks';
    const taskIds: string[] = [];
    for (const _step of given) {
      const created = await createTask(t, apiKey, { ...bodyD(), callBackUrl });
      expectOk(created, 202);
      taskIds.push(created.body.data.taskId);
    }
    for (const [i, step] of given.entries()) if (step.refused) refusedTasks.add(taskIds[i]);

    const results = await Promise.allSettled(given.map((step, i) => resolutions[step.resolve](taskIds[i])));

    results.forEach((result, i) => {
      if (given[i].refused) expect(result).toMatchObject({ status: 'rejected' });
      else expect(result).toEqual({ status: 'fulfilled', value: true });
    });
    const db = t.service.ctx.db.kysely;
    for (const [i, taskId] of taskIds.entries()) {
      const task = await db.selectFrom('tasks').select('state').where('id', '=', taskId).executeTakeFirstOrThrow();
      expect(task.state).toBe(given[i].want);
      const deliveries = await db.selectFrom('webhook_deliveries').select('id').where('task_id', '=', taskId).execute();
      expect(deliveries).toHaveLength(given[i].refused ? 0 : 1);
    }
    const held = given.filter((step) => step.refused).length * PRICE_D;
    const spent = given.filter((step) => !step.refused && step.resolve === 'succeed').length;
    expect(await t.wallet(accountId)).toMatchObject({ held });
    expect((await t.wallet(accountId)).spent > 0).toBe(spent > 0);
    await t.checkLedger(accountId);
  });
});

/**
 * The request paths' reads (runtime/storage/prepared-read.ts) while a resolution's transaction is
 * open: on SQLite a commit group holds the one connection across the resolution's awaits, and a
 * read on that connection would see its terminal state and released hold before they commit (here
 * they never do: the resolution is refused after the requests). recordInfo, quote and the balance
 * sent from inside the transaction answer with what is committed: the task still queued, its
 * credits still held (the account has no more, so the quote is refused).
 */
describe('reads while a resolution is open', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService(
      { simulatorLatencyMs: 600_000 },
      { startWorker: false, resolutionHooks: [...defaultResolutionHooks, refusingHook] },
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  const resolutions = {
    fail: (taskId: string) => failTask(t.service.ctx, taskId, 'generation_failed', 'boom'),
    expire: (taskId: string) => expireTask(t.service.ctx, taskId),
    succeed: (taskId: string) => succeedTask(t.service.ctx, taskId, { outputs: [], outputSeconds: 1 }),
  };
  it.each(Object.keys(resolutions) as (keyof typeof resolutions)[])('%s', async (resolve) => {
    const { apiKey } = await t.account(PRICE_D);
    const created = await createTask(t, apiKey, bodyD());
    expectOk(created, 202);
    const taskId: string = created.body.data.taskId;
    let answers: Promise<HttpResult[]> | undefined;
    probedTasks.set(taskId, async () => {
      answers = Promise.all([
        recordInfo(t, apiKey, taskId),
        t.call('POST', '/api/v1/jobs/quote', { key: apiKey, body: bodyD() }),
        t.call('GET', '/api/v1/chat/credit', { key: apiKey }),
      ]);
      // Answered while the transaction is open (a read that does not wait for it), or after it.
      await Promise.race([answers, new Promise((wake) => setTimeout(wake, 300))]);
    });

    await expect(resolutions[resolve](taskId)).rejects.toThrow(`refused ${taskId}`);

    const [record, quote, credit] = await answers!;
    expect(record.body.data).toMatchObject({ taskId, state: 'queued' });
    expect(quote.status).toBe(402);
    expect(quote.body.code).toBe(40201);
    expect(credit.body.data).toMatchObject({ available: 0, held: PRICE_D });
  });
});
