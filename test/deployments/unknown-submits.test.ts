import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { bodyD, MODEL_D } from '../http/helpers.js';
import { ROOT } from '../support/root.js';
import { OpenAiVideosServer, type OpenAiServerOptions } from '../../support/upstreams/openai-videos-server.js';
import { startMediaforge, waitForTask, walletOf, type MediaforgeProcess } from './support.js';
import { createOn } from './profile-deployments.js';

/**
 * Issue 37, point 2: no job the operator pays for goes unseen. A submit whose answer comes after
 * the upstream's submitTimeoutSeconds, on a protocol without an idempotency key (openai-videos
 * here), fails the task with its hold released, as before; now the job it may have made is
 * recorded, counted by `mediaforge report margin` as possibly abandoned with its declared cost,
 * and, where the protocol can list its jobs, found and reconciled (its end and cost recorded,
 * then abandoned), or found absent. Real `mediaforge serve` processes, the loopback Videos API.
 */
const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const deploymentsFile = (upstream: OpenAiVideosServer, submitTimeoutSeconds: number) =>
  [
    'upstreams:',
    `  ov: { kind: openai-videos, baseUrl: "${upstream.baseUrl}", submitTimeoutSeconds: ${submitTimeoutSeconds}, cost: { perSecond: "0.02" } }`,
    'models:',
    `  ${MODEL_D}:`,
    '    - upstream: ov',
  ].join('\n');

describe('submits whose outcome is unknown on a protocol without an idempotency key (issue 37)', () => {
  let proc: MediaforgeProcess | undefined;
  const servers: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await proc?.stop();
    proc = undefined;
    for (const server of servers.splice(0)) await server.close();
  });

  async function serve(options: OpenAiServerOptions, submitTimeoutSeconds: number, reconcilePollMs: number) {
    const upstream = await new OpenAiVideosServer(options).start();
    servers.push(upstream);
    proc = await startMediaforge(
      'unknown-submits',
      {
        MEDIAFORGE_DEPLOYMENTS: '$DIR/deployments.yaml',
        MEDIAFORGE_UPSTREAM_POLL_MS: '100',
        MEDIAFORGE_UPSTREAM_RECONCILE_POLL_MS: String(reconcilePollMs),
      },
      { 'deployments.yaml': deploymentsFile(upstream, submitTimeoutSeconds) },
    );
    const { accountId, apiKey } = await proc.account(1000);
    const taskId = await createOn(proc.url, apiKey, bodyD('answered too late, Picture 1', { duration_seconds: 5 }));
    return { upstream, proc, accountId, apiKey, taskId };
  }

  const margin = async (proc: MediaforgeProcess, json: boolean) =>
    (
      await run(process.execPath, [join(ROOT, 'bin/mediaforge.js'), 'report', 'margin', ...(json ? ['--json'] : [])], {
        env: { ...process.env, ...proc.env },
      })
    ).stdout;

  const row = (proc: MediaforgeProcess, taskId: string) =>
    proc.db.kysely
      .selectFrom('tasks')
      .select(['state', 'upstream_final_state', 'upstream_cost_micros'])
      .where('id', '=', taskId)
      .executeTakeFirstOrThrow();

  async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
    for (const end = Date.now() + timeoutMs; ; await sleep(50)) {
      const value = await read();
      if (done(value) || Date.now() > end) return value;
    }
  }

  it('a submit answered after submitTimeoutSeconds: the task fails uncharged, and `report margin` counts the job it may have made as possibly abandoned at its declared cost', async () => {
    // The reconcile pace is 10 minutes: nothing looks for the job during the test.
    const { upstream, proc, accountId, apiKey, taskId } = await serve({ submitDelayMs: 2500 }, 1, 600_000);
    const task = await waitForTask(proc.url, apiKey, taskId);
    expect(task).toMatchObject({ state: 'failed', errorCode: 'internal_error', credits: 0 });
    expect(await walletOf(proc, accountId)).toEqual({ held: 0, spent: 0 });
    expect(upstream.videos.size).toBe(1); // the job runs at the provider
    const report = JSON.parse(await margin(proc, true));
    expect(report.rows).toEqual([
      expect.objectContaining({
        model: MODEL_D,
        deployment: 'ov',
        tasks: 1,
        upstreamCostUsd: '0.000000',
        possiblyAbandoned: 1,
        possiblyAbandonedCostUsd: '0.100000',
      }),
    ]);
    expect(report.totals).toMatchObject({ possiblyAbandoned: 1, possiblyAbandonedCostUsd: '0.100000' });
    expect(await margin(proc, false)).toContain('possibly abandoned 1 (0.100000 USD declared)');
  }, 60_000);

  it("the job is found in the provider's list of videos and reconciled: its end and cost recorded, nothing downloaded; the margin report moves it from possibly abandoned to abandoned", async () => {
    const { upstream, proc, apiKey, taskId } = await serve({ submitDelayMs: 2500, latencyMs: 1000 }, 1, 300);
    expect(await waitForTask(proc.url, apiKey, taskId)).toMatchObject({ state: 'failed', credits: 0 });
    const reconciled = await until(
      () => row(proc, taskId),
      (r) => r.upstream_final_state !== null,
    );
    expect(reconciled).toEqual({ state: 'failed', upstream_final_state: 'succeeded', upstream_cost_micros: 100_000 });
    // Released, never downloaded: the release follows the recorded end (runtime/worker/reconcile.ts), so it is waited for.
    const released = await until(
      async () => [...upstream.videos.values()].map((v) => v.deleted),
      (deleted) => deleted.every(Boolean),
    );
    expect(released).toEqual([true]);
    const report = JSON.parse(await margin(proc, true));
    expect(report.totals).toMatchObject({
      abandonedCostUsd: '0.100000',
      possiblyAbandoned: 0,
      possiblyAbandonedCostUsd: '0.000000',
    });
  }, 60_000);

  it('a late submit that made no job: the list shows none, the task is recorded absent and no longer counted', async () => {
    const { upstream, proc, apiKey, taskId } = await serve(
      { submitDelayMs: 2500, slowSubmitsCreateNothing: true },
      1,
      300,
    );
    expect(await waitForTask(proc.url, apiKey, taskId)).toMatchObject({ state: 'failed', credits: 0 });
    const ended = await until(
      () => row(proc, taskId),
      (r) => r.upstream_final_state !== null,
    );
    expect(ended).toEqual({ state: 'failed', upstream_final_state: 'absent', upstream_cost_micros: null });
    expect(upstream.videos.size).toBe(0);
    expect(JSON.parse(await margin(proc, true)).totals).toMatchObject({ possiblyAbandoned: 0 });
  }, 60_000);

  it("submitTimeoutSeconds is the upstream's own: a submit answered in 2.5 s succeeds where the upstream allows 5 s", async () => {
    const { upstream, proc, apiKey, taskId } = await serve({ submitDelayMs: 2500 }, 5, 600_000);
    expect(await waitForTask(proc.url, apiKey, taskId)).toMatchObject({ state: 'succeeded' });
    expect(upstream.videos.size).toBe(1);
    expect(JSON.parse(await margin(proc, true)).totals).toMatchObject({ possiblyAbandoned: 0 });
  }, 60_000);
});
