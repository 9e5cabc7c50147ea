import { describe, expect, it } from 'vitest';
import { catalogue } from '../../generated/catalogue.js';
import { clip } from '../../support/media/fixtures.js';
import { bodyD, createTask, expectOk, MODEL_D } from '../http/helpers.js';
import { closedAfterEach, costedJobsUpstream, serviceOnPlan } from './support.js';
import { waitForTerminal } from '../support/service.js';

/**
 * Issue 37, point 9: results are checked against the request. The task asks MODEL_D for 10 s at
 * 2k, 16:9 (2560x1440, MP4); the loopback jobs-protocol upstream completes the job and hands out
 * another clip. A frame or a container other than the asked one fails the task as a provider
 * error (hold released, the job's upstream cost still recorded, the warning says so); a clip
 * shorter than asked (beyond the tolerance) is settled at the length delivered, as the catalogue
 * prices by the second, and the warning says that. Before this check, every one of them succeeded,
 * charged at the 2k rate.
 */
const CREDITS = 100_000;
/** The operator's declared cost: 0.02 USD per started second. */
const PER_SECOND_MICROS = 20_000;
const ASKED = { duration_seconds: 10, resolution: '2k', aspect_ratio: '16:9' };
const MP4 = ['isom', 'iso2', 'avc1', 'mp41'];

describe('a result is checked against the request (issue 37, point 9)', () => {
  const opened = closedAfterEach();

  async function run(result: Buffer) {
    const { upstream, plan } = await costedJobsUpstream(opened, { result: () => result });
    const { t, accountId, apiKey } = await serviceOnPlan(opened, plan, {}, {}, CREDITS);
    const body = bodyD('a fox in the snow, Picture 1', ASKED);
    const created = await createTask(t, apiKey, body);
    expectOk(created, 202);
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    const row = await t.service.ctx.db.kysely
      .selectFrom('tasks')
      .select(['upstream_cost_micros'])
      .where('id', '=', task.taskId)
      .executeTakeFirstOrThrow();
    return { t, upstream, task, row, accountId, input: body.input };
  }

  it.each([
    ['a 768p frame (1366x768) for a 2k request', clip(10, 4, { width: 1366, height: 768 }), '2560x1440', '1366x768'],
    [
      'a portrait frame (1440x2560) for a 16:9 request',
      clip(10, 4, { width: 1440, height: 2560 }),
      '2560x1440',
      '1440x2560',
    ],
    ['a QuickTime file for an MP4 request', clip(10, 4, { width: 2560, height: 1440, brands: ['qt  '] }), 'MP4', 'MOV'],
  ])(
    '%s: failed generation_failed, hold released, the upstream cost recorded, the warning names both',
    async (_n, result, asked, delivered) => {
      const { t, upstream, task, row, accountId } = await run(result);
      expect(upstream.completed.size).toBe(1);
      expect(task).toMatchObject({ state: 'failed', errorCode: 'generation_failed', settled: true, credits: 0 });
      expect(task.output).toBeNull();
      expect(task.warnings).toEqual([expect.objectContaining({ code: 'result_not_as_requested', path: 'output' })]);
      const warning = task.warnings[0].message as string;
      expect(warning).toContain(asked);
      expect(warning).toContain(delivered);
      expect(await t.wallet(accountId)).toMatchObject({ available: CREDITS, held: 0, spent: 0 });
      await t.checkLedger(accountId);
      expect(row.upstream_cost_micros).toBe(10 * PER_SECOND_MICROS);
    },
  );

  it('a 5 s clip at the asked frame for a 10 s request: succeeded, charged for the 5 s delivered, the warning says so', async () => {
    const { t, task, row, accountId, input } = await run(clip(5, 4, { width: 2560, height: 1440, brands: MP4 }));
    const delivered = catalogue.get(MODEL_D)!.price(input, { outputSeconds: 5 }).estimatedCredits;
    const asked = catalogue.get(MODEL_D)!.price(input, { outputSeconds: 10 }).estimatedCredits;
    expect(delivered).toBeLessThan(asked);
    expect(task).toMatchObject({ state: 'succeeded', settled: true, credits: delivered });
    expect(task.warnings).toEqual([expect.objectContaining({ code: 'result_settled_as_delivered', path: 'output' })]);
    expect(task.warnings[0].message).toContain('5 s');
    expect(await t.wallet(accountId)).toMatchObject({ available: CREDITS - delivered, held: 0, spent: delivered });
    await t.checkLedger(accountId);
    expect(row.upstream_cost_micros).toBe(5 * PER_SECOND_MICROS);
  });

  it.each([
    ['the asked clip (10 s, 2560x1440)', 10, 1440],
    ['a clip within the tolerances (9.6 s, 2560x1448)', 9.6, 1448],
  ])('%s: succeeded at the asked price, no warning', async (_n, seconds, height) => {
    const { task, input } = await run(clip(seconds, 5, { width: 2560, height, brands: MP4 }));
    const asked = catalogue.get(MODEL_D)!.price(input, { outputSeconds: 10 }).estimatedCredits;
    expect(task).toMatchObject({ state: 'succeeded', credits: asked, warnings: [] });
  });
});
