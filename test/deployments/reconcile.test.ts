import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { parseDeployments } from '../../runtime/routing/deployments-file.js';
import { marginReport } from '../../runtime/routing/margin.js';
import { bodyD, createTask, IMAGE, MODEL_D, MODEL_MINI } from '../http/helpers.js';
import { ROOT } from '../support/root.js';
import { JobsProtocolServer } from '../../support/upstreams/jobs-protocol-server.js';
import { ReplicateServer } from '../../support/upstreams/replicate-server.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';
import { modelsSection } from '../support/deployments-yaml.js';
import { startMediaforge, waitForTask, walletOf, type MediaforgeProcess } from './support.js';
import { createOn } from './profile-deployments.js';

/**
 * Issue 27, reconciliation: a task that ended while its upstream job may still run (here: expired
 * at its deadline on the jobs protocol, which has no cancel) no longer waits for the job, but the
 * operator may still pay for it. The job is polled slowly until it ends or the horizon passes; the
 * client's outcome does not change; the job's end and cost are recorded on the task, and the cost
 * is what `mediaforge report margin` and /metrics call abandoned. Against the loopback jobs and
 * Replicate servers (test/support) and real `mediaforge serve` processes.
 */
const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const METRICS_TOKEN = 'reconcile-metrics-token';
/** The declared cost, 0.02 USD a second, of a 5 s job. */
const JOB_COST_MICROS = 5 * 20_000;
/**
 * The deadline of the tasks that must expire while their job runs: long enough for the worker to
 * submit first on a loaded machine (a task that expires unsubmitted has nothing to reconcile); the
 * jobs take longer, so that each task expires first.
 */
const DEADLINE_SECONDS = 4;

const deploymentsFile = (upstream: JobsProtocolServer) =>
  [
    'upstreams:',
    `  up: { kind: jobs, baseUrl: "${upstream.baseUrl}", cost: { perSecond: "0.02" } }`,
    ...modelsSection({ [MODEL_D]: 'up' }),
  ].join('\n');

type TaskReconciled = { state: string; upstream_final_state: string | null; upstream_cost_micros: number | null };

describe('reconciliation of upstream jobs their tasks no longer wait for (issue 27)', () => {
  let t: TestService | undefined;
  let proc: MediaforgeProcess | undefined;
  const servers: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await t?.close();
    await proc?.stop();
    [t, proc] = [undefined, undefined];
    for (const server of servers.splice(0)) await server.close();
  });

  const rowOf = (db: MediaforgeProcess['db'], taskId: string): Promise<TaskReconciled> =>
    db.kysely
      .selectFrom('tasks')
      .select(['state', 'upstream_final_state', 'upstream_cost_micros'])
      .where('id', '=', taskId)
      .executeTakeFirstOrThrow();

  const reconcileItems = (db: MediaforgeProcess['db'], taskId: string) =>
    db.kysely
      .selectFrom('work_items')
      .select(['done_at'])
      .where('task_id', '=', taskId)
      .where('kind', '=', 'reconcile')
      .execute();

  /**
   * The task's row once the job's end is recorded, and its reconcile items' outcomes a moment
   * later: the handler records the end, the worker the item's outcome after the handler returns.
   * An item still open after 5 s more is left for the caller's assertion to report.
   */
  async function untilReconciled(db: MediaforgeProcess['db'], taskId: string, timeoutMs = 20_000) {
    for (const until = Date.now() + timeoutMs; Date.now() < until; await sleep(50)) {
      const row = await rowOf(db, taskId);
      if (row.upstream_final_state === null) continue;
      for (const itemsBy = Date.now() + 5000; Date.now() < itemsBy; await sleep(50))
        if ((await reconcileItems(db, taskId)).every((item) => item.done_at !== null)) break;
      return row;
    }
    throw new Error(`task ${taskId} not reconciled after ${timeoutMs} ms`);
  }

  async function serve(upstream: JobsProtocolServer, env: Record<string, string> = {}) {
    proc = await startMediaforge(
      'reconcile',
      {
        MEDIAFORGE_DEPLOYMENTS: '$DIR/deployments.yaml',
        MEDIAFORGE_UPSTREAM_POLL_MS: '100',
        MEDIAFORGE_TASK_DEADLINE_SECONDS: String(DEADLINE_SECONDS),
        MEDIAFORGE_UPSTREAM_RECONCILE_POLL_MS: '300',
        MEDIAFORGE_METRICS_TOKEN: METRICS_TOKEN,
        ...env,
      },
      { 'deployments.yaml': deploymentsFile(upstream) },
    );
    const { accountId, apiKey } = await proc.account(1000);
    const taskId = await createOn(proc.url, apiKey, bodyD('finishes too late, Picture 1', { duration_seconds: 5 }));
    return { proc, accountId, apiKey, taskId };
  }

  it("a job that finishes after its task expired is reconciled: the client's outcome stays expired and uncharged; the job's end and cost are recorded without a download, and `report margin --json` and /metrics show the cost as abandoned", async () => {
    const upstream = await new JobsProtocolServer({ latencyMs: DEADLINE_SECONDS * 1000 + 2500 }).start();
    servers.push(upstream);
    const { proc, accountId, apiKey, taskId } = await serve(upstream);
    const expired = await waitForTask(proc.url, apiKey, taskId, undefined, 15_000);
    expect(expired).toMatchObject({ state: 'expired', errorCode: 'deadline_exceeded', credits: 0 });
    expect(upstream.submits).toHaveLength(1); // submitted before the deadline: a job to reconcile
    expect(upstream.completed.size).toBe(0); // the job still runs at the provider

    const row = await untilReconciled(proc.db, taskId);
    expect(row).toEqual({ state: 'expired', upstream_final_state: 'succeeded', upstream_cost_micros: JOB_COST_MICROS });
    expect(upstream.downloads).toBe(0);
    expect((await reconcileItems(proc.db, taskId)).map((i) => i.done_at !== null)).toEqual([true]);
    // The client's record is what it was at the deadline; its hold stays released, nothing spent.
    const after = await waitForTask(proc.url, apiKey, taskId);
    expect(after).toMatchObject({ state: 'expired', errorCode: 'deadline_exceeded', credits: 0 });
    expect(await walletOf(proc, accountId)).toEqual({ held: 0, spent: 0 });

    const { stdout } = await run(process.execPath, [join(ROOT, 'bin/mediaforge.js'), 'report', 'margin', '--json'], {
      env: { ...process.env, ...proc.env },
    });
    const margin = JSON.parse(stdout);
    expect(margin.rows).toEqual([
      expect.objectContaining({
        model: MODEL_D,
        deployment: 'up',
        tasks: 1,
        succeeded: 0,
        revenueUsd: '0.000000',
        upstreamCostUsd: '0.100000',
        abandonedCostUsd: '0.100000',
        marginUsd: '-0.100000',
      }),
    ]);
    expect(margin.totals.abandonedCostUsd).toBe('0.100000');
    const metrics = await fetch(`${proc.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain(
      `mediaforge_upstream_abandoned_cost_usd{model="${MODEL_D}",deployment="up"} 0.1`,
    );
  }, 60_000);

  it("SIGKILL of the serve process mid-reconcile (the job's end learned, nothing recorded): the restarted process polls the job again and records its end and cost once", async () => {
    const upstream = await new JobsProtocolServer({ latencyMs: DEADLINE_SECONDS * 1000 + 2000 }).start();
    servers.push(upstream);
    const { proc, taskId } = await serve(upstream, {
      MEDIAFORGE_FAULT_POINTS: 'reconcile.answered',
      MEDIAFORGE_LEASE_MS: '1500',
    });
    const exit = await proc.server.exited;
    expect(upstream.submits).toHaveLength(1);
    expect(proc.server.child.signalCode ?? exit).toBe('SIGKILL');
    expect(upstream.completed.size).toBe(1); // the reconcile poll saw the job succeed, then the process died
    expect(await rowOf(proc.db, taskId)).toEqual({
      state: 'expired',
      upstream_final_state: null,
      upstream_cost_micros: null,
    });
    const pollsAtCrash = upstream.polls;

    delete proc.env.MEDIAFORGE_FAULT_POINTS;
    await proc.restart();
    const row = await untilReconciled(proc.db, taskId);
    expect(row).toEqual({ state: 'expired', upstream_final_state: 'succeeded', upstream_cost_micros: JOB_COST_MICROS });
    expect(upstream.polls).toBeGreaterThan(pollsAtCrash);
    expect(upstream.downloads).toBe(0);
    expect((await reconcileItems(proc.db, taskId)).map((i) => i.done_at !== null)).toEqual([true]);
  }, 60_000);

  it('a cancel the provider ignored (Replicate answers it, the prediction runs on and completes): reconciled as succeeded, its cost abandoned, nothing downloaded', async () => {
    const replicate = await new ReplicateServer({ latencyMs: 3000, cancelIgnored: true }).start();
    servers.push(replicate);
    const plan = parseDeployments(
      'deployments.yaml',
      [
        'upstreams:',
        `  r8: { kind: replicate, baseUrl: "${replicate.baseUrl}", cost: { perSecond: "0.02" } }`,
        'models:',
        `  ${MODEL_D}:`,
        '    - { upstream: r8, upstreamModel: vendor-d/family-d-r2v }',
      ].join('\n'),
    );
    t = await startTestService(
      { upstreamPollMs: 50, taskDeadlineMs: 1500, upstreamReconcilePollMs: 250 },
      { deploymentsPlan: plan },
    );
    const { accountId, apiKey } = await t.account(1000);
    const created = await createTask(t, apiKey, bodyD('cannot be stopped, Picture 1', { duration_seconds: 5 }));
    const taskId = created.body.data.taskId as string;
    expect(await waitForTerminal(t, apiKey, taskId, 15_000)).toMatchObject({ state: 'expired', credits: 0 });
    const row = await untilReconciled(t.service.ctx.db, taskId);
    expect(replicate.cancels).toEqual([...replicate.predictions.keys()]);
    expect(row).toEqual({ state: 'expired', upstream_final_state: 'succeeded', upstream_cost_micros: JOB_COST_MICROS });
    expect(replicate.downloads).toBe(0);
    const margin = await marginReport(t.service.ctx.db.kysely);
    expect(margin.totals).toMatchObject({ revenueUsd: '0.000000', abandonedCostUsd: '0.100000' });
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
    await t.checkLedger(accountId);
  });

  it('a poll that gave up (the upstream lost the job: 404): the task fails, the job is reconciled once as lost, at no cost', async () => {
    const upstream = await new JobsProtocolServer({ latencyMs: 1000, forgetTasks: true }).start();
    servers.push(upstream);
    t = await startTestService(
      { upstreamPollMs: 50, upstreamReconcilePollMs: 100 },
      { deploymentsPlan: parseDeployments('deployments.yaml', deploymentsFile(upstream)) },
    );
    const { apiKey } = await t.account(1000);
    const created = await createTask(t, apiKey, bodyD('lost, Picture 1', { duration_seconds: 5 }));
    const taskId = created.body.data.taskId as string;
    expect(await waitForTerminal(t, apiKey, taskId, 15_000)).toMatchObject({
      state: 'failed',
      errorCode: 'internal_error',
    });
    const row = await untilReconciled(t.service.ctx.db, taskId);
    expect(row).toEqual({ state: 'failed', upstream_final_state: 'lost', upstream_cost_micros: null });
    // The poll that found the job lost, then one reconcile poll (it may come before the client's wait returns: counted in all).
    expect(upstream.polls).toBe(2);
    expect((await reconcileItems(t.service.ctx.db, taskId)).map((i) => i.done_at !== null)).toEqual([true]);
  });

  it("issue 37: reconciliation runs in a lane of its own: an upstream that hangs on a reconcile poll holds back no live task's work, even with one slot in the task lane", async () => {
    const upstream = await new JobsProtocolServer({ latencyMs: 600_000 }).start();
    servers.push(upstream);
    const plan = parseDeployments(
      'deployments.yaml',
      [
        'upstreams:',
        `  up: { kind: jobs, baseUrl: "${upstream.baseUrl}" }`,
        '  sim: { kind: simulator }',
        ...modelsSection({ [MODEL_D]: 'up', [MODEL_MINI]: 'sim' }),
      ].join('\n'),
    );
    t = await startTestService(
      {
        upstreamPollMs: 50,
        taskDeadlineMs: DEADLINE_SECONDS * 1000,
        upstreamReconcilePollMs: 100,
        workerConcurrency: 1,
      },
      { deploymentsPlan: plan },
    );
    const { apiKey } = await t.account(1000);
    const ended = await createTask(t, apiKey, bodyD('hangs once ended, Picture 1'));
    expect(await waitForTerminal(t, apiKey, ended.body.data.taskId, 20_000)).toMatchObject({ state: 'expired' });
    expect(
      await reconcileItems(t.service.ctx.db, ended.body.data.taskId),
      'the expired task had its job submitted, so there is one to reconcile',
    ).toHaveLength(1);
    // From now on the upstream answers no status request: the reconcile poll hangs (until its 20 s request timeout).
    upstream.holdPolls = true;
    for (const until = Date.now() + 10_000; upstream.heldPolls.open === 0 && Date.now() < until; ) await sleep(20);
    expect(upstream.heldPolls.open).toBe(1);
    const live = await createTask(t, apiKey, {
      model: MODEL_MINI,
      input: { prompt: 'a live task, Picture 1 as the fox', reference_image_urls: [IMAGE], duration_seconds: 4 },
    });
    const done = await waitForTerminal(t, apiKey, live.body.data.taskId, 60_000);
    // The live task ran and succeeded while the reconcile poll was still held open (before: only once it timed out).
    expect(done).toMatchObject({ state: 'succeeded' });
    expect(upstream.heldPolls).toEqual({ open: 1, closedByClient: 0 });
    await upstream.close(); // the held request ends: the service's shutdown need not wait for its timeout
  }, 90_000);

  it('a job that never ends is polled slowly until the horizon, then left unresolved and polled no more; it costs nothing', async () => {
    const upstream = await new JobsProtocolServer({ latencyMs: 600_000 }).start();
    servers.push(upstream);
    const plan = parseDeployments('deployments.yaml', deploymentsFile(upstream));
    t = await startTestService(
      {
        upstreamPollMs: 50,
        taskDeadlineMs: DEADLINE_SECONDS * 1000,
        upstreamReconcilePollMs: 250,
        upstreamReconcileMs: 2000,
      },
      { deploymentsPlan: plan },
    );
    const { accountId, apiKey } = await t.account(1000);
    const created = await createTask(t, apiKey, bodyD('never ends, Picture 1', { duration_seconds: 5 }));
    const taskId = created.body.data.taskId as string;
    const task = await waitForTerminal(t, apiKey, taskId, 20_000);
    expect(task).toMatchObject({ state: 'expired', credits: 0 });
    expect(upstream.submits).toHaveLength(1); // submitted before the deadline: a job to reconcile
    const pollsAtExpiry = upstream.polls;

    const row = await untilReconciled(t.service.ctx.db, taskId);
    expect(row).toEqual({ state: 'expired', upstream_final_state: 'unresolved', upstream_cost_micros: null });
    // Polled between the deadline and the horizon (every 250 ms for 2 s), then no more.
    expect(upstream.polls - pollsAtExpiry).toBeGreaterThanOrEqual(3);
    expect((await reconcileItems(t.service.ctx.db, taskId)).map((i) => i.done_at !== null)).toEqual([true]);
    const pollsAtHorizon = upstream.polls;
    await sleep(1000);
    expect(upstream.polls).toBe(pollsAtHorizon);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
    await t.checkLedger(accountId);
  });
});
