// @store-suite: upstream results (images, audio) are streamed into the store (vitest.config.ts runs it on the local and the S3 store).
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { marginReport, microsToUsd } from '../../runtime/routing/margin.js';
import { bodyD, createTask, expectOk, MODEL_D } from '../http/helpers.js';
import { png } from '../../support/media/fixtures.js';
import type { JobsServerOptions } from '../../support/upstreams/jobs-protocol-server.js';
import { closedAfterEach, costedJobsUpstream, serviceOnPlan } from './support.js';
import { waitForTerminal } from '../support/service.js';

/**
 * Issue 25, N6: a result that is not a video. The upstream (a loopback jobs-protocol server)
 * completes the job and hands out a page, a text or a picture alone instead of a clip. A task of
 * a video model succeeds only with a probed video of a length: otherwise it fails, the hold is
 * released, nothing of the result is kept, and what the operator owes the provider for the
 * completed job is still recorded on the task (and so in the margin report).
 */
const PAGE = Buffer.from('<!doctype html><html><head><title>Moved</title></head><body>Sign in first.</body></html>\n');
/** The operator's declared cost: 0.02 USD per started second, the job asked for 5 s. */
const JOB_COST_MICROS = 5 * 20_000;
const CREDITS = 1000;

const NON_VIDEOS: [string, JobsServerOptions][] = [
  ['an HTML page declared text/html', { result: () => PAGE, resultMime: 'text/html' }],
  ['an HTML page declared video/mp4', { result: () => PAGE }],
  ['a picture alone, declared image/png', { result: () => png(64, 64, false), resultMime: 'image/png' }],
];

describe('a result that is not a video fails the task, and the completed job is still costed (N6)', () => {
  const opened = closedAfterEach();

  it.each(NON_VIDEOS)(
    '%s: failed generation_failed, hold released, nothing stored, the upstream cost recorded and reported',
    async (_name, given) => {
      const { upstream, plan } = await costedJobsUpstream(opened, given);
      const { t, accountId, apiKey } = await serviceOnPlan(opened, plan, {}, {}, CREDITS);
      const created = await createTask(t, apiKey, bodyD('a fox in the snow, Picture 1', { duration_seconds: 5 }));
      expectOk(created, 202);
      const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);

      expect(upstream.completed.size).toBe(1);
      expect(task).toMatchObject({ state: 'failed', errorCode: 'generation_failed', settled: true, credits: 0 });
      expect(task.output).toBeNull();
      expect(await t.wallet(accountId)).toMatchObject({ available: CREDITS, held: 0, spent: 0 });
      await t.checkLedger(accountId);
      // Nothing of the result is kept under the task's outputs.
      const outputs = join(t.config.dataDir, 'blobs', 'outputs', task.taskId);
      expect(existsSync(outputs) ? readdirSync(outputs) : []).toEqual([]);
      // The provider finished a job: the operator pays for it, and the margin report says so.
      const row = await t.service.ctx.db.kysely
        .selectFrom('tasks')
        .select(['deployment', 'upstream_cost_micros'])
        .where('id', '=', task.taskId)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ deployment: 'up', upstream_cost_micros: JOB_COST_MICROS });
      const report = await marginReport(t.service.ctx.db.kysely);
      expect(report.rows).toEqual([
        expect.objectContaining({
          model: MODEL_D,
          deployment: 'up',
          tasks: 1,
          succeeded: 0,
          revenueCredits: 0,
          upstreamCostUsd: microsToUsd(JOB_COST_MICROS),
          marginUsd: microsToUsd(-JOB_COST_MICROS),
        }),
      ]);
    },
  );
});
