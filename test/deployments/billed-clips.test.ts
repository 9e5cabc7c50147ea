// @store-suite: billed clips are measured from the store (vitest.config.ts runs it on the local and the S3 store).
import { describe, expect, it } from 'vitest';
import { catalogue } from '../../generated/catalogue.js';
import { marginReport, microsToUsd } from '../../runtime/routing/margin.js';
import { createTask, expectOk } from '../http/helpers.js';
import type { JobsProtocolServer } from '../../support/upstreams/jobs-protocol-server.js';
import { OnceClipServer } from '../support/once-clip-server.js';
import { closedAfterEach, costedJobsUpstream, serviceOnPlan } from './support.js';
import { waitForTerminal, type TestService } from '../support/service.js';

/**
 * Issue 25, N3: no free upstream jobs through billed reference clips. A model that bills its
 * reference clips by length (family_c-2.6 and 2.6-flash: the catalogue's referenceClips) has them
 * fetched and measured in the check lane before anything is submitted; settlement bills those
 * lengths and nothing fetches the clip after the job. The hostile host is a clip that answers once
 * (test/support/once-clip-server.ts); the upstream is a loopback jobs-protocol server which, like a
 * provider, may read the clip itself when the job is submitted. `log` holds both servers' events
 * in the order they happened. Tests may name models; the runtime may not.
 */
const FAMILY_C26 = 'vendor_b/family_c-2.6/reference-to-video';
const FLASH = 'vendor_b/family_c-2.6-flash/reference-to-video';
const CREDITS = 100_000;
/** The operator's declared cost of the upstream: 0.02 USD per started second of output. */
const PER_SECOND_MICROS = 20_000;

const inputOf = (model: string, clip: string): Record<string, unknown> => ({
  prompt: 'the character from the clip waves',
  duration_seconds: 2,
  resolution: '720p',
  ...(model === FLASH ? { generate_audio: false } : {}),
  reference_video_urls: [clip],
});

describe('billed reference clips are measured before the submit, never after the job (N3)', () => {
  const opened = closedAfterEach();

  async function serve(model: string, clip: { seconds: number; answers: number }, fetchReferences: boolean) {
    const log: string[] = [];
    const { upstream, plan } = await costedJobsUpstream(opened, { fetchReferences, log }, model);
    const clips = await new OnceClipServer({ ...clip, log }).start();
    opened.servers.push(clips);
    const { t, accountId, apiKey } = await serviceOnPlan(
      opened,
      plan,
      {},
      { webhookAllowPrivate: true, webhookAllowInsecure: true },
      CREDITS,
    );
    const created = await createTask(t, apiKey, { model, input: inputOf(model, clips.url) });
    expectOk(created, 202);
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 20_000);
    const row = await t.service.ctx.db.kysely
      .selectFrom('tasks')
      .selectAll()
      .where('id', '=', task.taskId)
      .executeTakeFirstOrThrow();
    return { t, upstream, clips, log, task, row, accountId, apiKey };
  }

  /** Every job the upstream completed belongs to a task that was charged: the operator never pays for a free job. */
  async function expectNoFreeJob(t: TestService, upstream: JobsProtocolServer) {
    const handles = [...upstream.completed];
    const tasks = handles.length
      ? await t.service.ctx.db.kysely
          .selectFrom('tasks')
          .select(['deployment_handle', 'charged_credits'])
          .where('deployment_handle', 'in', handles)
          .execute()
      : [];
    expect(tasks.map((r) => [r.deployment_handle, (r.charged_credits ?? 0) > 0])).toEqual(
      handles.map((h) => [h, true]),
    );
  }

  /**
   * A 3 s clip that answered once: read by the service's check alone, before the submit, and the
   * task settled at the price of the 3 s measured then (its row keeps them). That price.
   */
  function expectBilledAsMeasuredBeforeSubmit(model: string, served: Awaited<ReturnType<typeof serve>>) {
    const { clips, log, task, row } = served;
    const measured = catalogue
      .get(model)!
      .price(inputOf(model, clips.url), { outputSeconds: 2, referenceClipSeconds: [3] });
    expect(log).toEqual(['clip answered', 'submit']);
    expect(clips.requests).toBe(1);
    expect(task).toMatchObject({ state: 'succeeded', settled: true, credits: measured.estimatedCredits });
    expect(JSON.parse(row.reference_clip_seconds_json!)).toEqual([3]);
    return measured;
  }

  // Issue 37 point 3: the provider reads the service's stored copy, never the customer's host again
  // (before it, the provider's read found the clip gone and the job failed on the provider's side).
  it.each([['family_c-2.6', FAMILY_C26]])(
    '%s, a clip that answers once and is then gone, read by the provider: it reads the copy the service measured, billed at the measured 3 s, no free job',
    async (_name, model) => {
      const served = await serve(model, { seconds: 3, answers: 1 }, true);
      const { t, upstream, accountId } = served;
      // One read of the customer's host, by the service's check, before the submit; the provider read the copy.
      expectBilledAsMeasuredBeforeSubmit(model, served);
      await expectNoFreeJob(t, upstream);
      await t.checkLedger(accountId);
    },
  );

  // family_c-2.6-flash has format limits for its clips: before, the check read them and the deployment read them again after the job.
  it.each([
    ['family_c-2.6', FAMILY_C26],
    ['family_c-2.6-flash', FLASH],
  ])(
    '%s, a clip that answers once, the provider not reading it again: billed at the 3 s measured before the submit, read once, the cost recorded',
    async (_name, model) => {
      const served = await serve(model, { seconds: 3, answers: 1 }, false);
      const { t, upstream, task, row, accountId } = served;
      const measured = expectBilledAsMeasuredBeforeSubmit(model, served);
      const seconds = task.output.assets[0].durationSeconds as number;
      expect(row.upstream_cost_micros).toBe(Math.ceil(seconds) * PER_SECOND_MICROS);
      await expectNoFreeJob(t, upstream);
      expect(await t.wallet(accountId)).toMatchObject({
        available: CREDITS - measured.estimatedCredits,
        held: 0,
        spent: measured.estimatedCredits,
      });
      await t.checkLedger(accountId);
    },
  );

  it.each([['family_c-2.6', FAMILY_C26]])(
    '%s, a clip already gone (404 from the first read): the task fails reference_invalid before any submit reaches the upstream',
    async (_name, model) => {
      const { t, upstream, log, task, accountId } = await serve(model, { seconds: 3, answers: 0 }, true);
      expect(log).toEqual(['clip 404']);
      expect(upstream.submits).toHaveLength(0);
      expect(task).toMatchObject({ state: 'failed', errorCode: 'reference_invalid', settled: true, credits: 0 });
      expect(task.errorMessage).toContain('input.reference_video_urls[0]');
      expect(await t.wallet(accountId)).toMatchObject({ available: CREDITS, held: 0, spent: 0 });
      // Nothing ran upstream: no cost in the margin report either.
      expect((await marginReport(t.service.ctx.db.kysely)).totals.upstreamCostUsd).toBe(microsToUsd(0));
      await t.checkLedger(accountId);
    },
  );
});
