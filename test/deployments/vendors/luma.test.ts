import { afterEach, describe, expect, it } from 'vitest';
import { createTask } from '../../http/helpers.js';
import { type TestService, waitForTerminal } from '../../support/service.js';
import { LumaServer, type LumaServerOptions } from '../../../support/upstreams/vendors/luma-server.js';
import { crash, type MediaforgeProcess, startMediaforge, waitForTask } from '../support.js';
import {
  createOn,
  bothModels,
  deploymentsFile,
  FRAME,
  imageTask,
  marginReport,
  serveDeployments,
  TEXT_MODEL,
  taskRow,
  textTask,
  reconciled,
} from './harness.js';

const KEY = 'luma-operator-key';
const FLAGGED = 'FLAG-THIS';

describe("luma profile: Luma's Dream Machine API against a loopback Luma", () => {
  let t: TestService | undefined;
  let proc: MediaforgeProcess | undefined;
  const servers: LumaServer[] = [];
  afterEach(async () => {
    await t?.close();
    await proc?.stop();
    [t, proc] = [undefined, undefined];
    for (const server of servers.splice(0)) await server.close();
  });

  async function serve(
    given: LumaServerOptions,
    settings: { deadlineMs?: number; pollMs?: number; secondGiven?: LumaServerOptions } = {},
  ) {
    const first = await new LumaServer({ latencyMs: 300, apiKey: KEY, ...given }).start();
    const second = await new LumaServer({ latencyMs: 300, apiKey: KEY, ...settings.secondGiven }).start();
    servers.push(first, second);
    const file = deploymentsFile(
      'luma',
      {
        first: { baseUrl: first.baseUrl, secretEnv: 'LUMA_KEY' },
        second: { baseUrl: second.baseUrl, secretEnv: 'LUMA_KEY' },
      },
      bothModels('ray-2'),
    );
    t = await serveDeployments(file, { LUMA_KEY: KEY }, settings);
    const account = await t.account(1000);
    return { first, second, t, ...account };
  }

  async function run(t: TestService, apiKey: string, body: unknown) {
    const created = await createTask(t, apiKey, body);
    expect(created.status).toBe(202);
    return waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
  }

  it("text to video: POST /dream-machine/v1/generations/video in Luma's names, through queued and dreaming to completed; assets.video downloaded", async () => {
    const { first, second, t, accountId, apiKey } = await serve({ latencyMs: 600, queuedMs: 300 });
    const task = await run(t, apiKey, textTask('a fox in the snow', { aspect_ratio: '9:16', duration_seconds: 5 }));
    expect(task.state).toBe('succeeded');
    const [submit] = first.submits;
    expect(submit.path).toBe('/dream-machine/v1/generations/video');
    expect(submit.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(submit.body).toEqual({
      model: 'ray-2',
      prompt: 'a fox in the snow',
      aspect_ratio: '9:16',
      resolution: '720p',
      duration: '5s',
    });
    expect(second.submits).toEqual([]);
    const [id] = [...first.jobs.keys()];
    const row = await taskRow(t, task.taskId);
    expect(row.deployment).toBe('first');
    expect(row.deployment_handle).toContain(id);
    expect(first.polls).toBeGreaterThan(1);
    expect(first.downloads).toBe(1);
    const [asset] = task.output.assets;
    expect(asset.url.startsWith(`${t.url}/api/v1/media/`)).toBe(true);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: task.credits });
    expect(task.credits).toBeGreaterThan(0);
    await t.checkLedger(accountId);
  });

  it("image to video: the opening frame is Luma's keyframes.frame0, and no frame1 without a closing frame", async () => {
    const { first, t, apiKey } = await serve({});
    const task = await run(t, apiKey, imageTask('the fox turns'));
    expect(task.state).toBe('succeeded');
    expect(first.submits[0].body.keyframes).toEqual({ frame0: { type: 'image', url: FRAME } });
  });

  it('image to video with a closing frame: keyframes frame0 and frame1', async () => {
    const { first, t, apiKey } = await serve({});
    const last = 'https://example.com/last-frame.png';
    const task = await run(t, apiKey, imageTask('the fox turns', { last_image_url: last }));
    expect(task.state).toBe('succeeded');
    expect(first.submits[0].body.keyframes).toEqual({
      frame0: { type: 'image', url: FRAME },
      frame1: { type: 'image', url: last },
    });
  });

  it("failed: the task fails with Luma's failure_reason, without the generation id; hold released, no failover", async () => {
    const { first, second, t, accountId, apiKey } = await serve({ failWhenPromptContains: FLAGGED });
    const task = await run(t, apiKey, textTask(`a fox ${FLAGGED}`));
    expect(task).toMatchObject({ state: 'failed', errorCode: 'generation_failed' });
    expect(task.errorMessage).toContain('advanced moderation failed');
    expect(task.errorMessage).not.toContain([...first.jobs.keys()][0]);
    expect([first.submits.length, second.submits.length]).toEqual([1, 0]);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
    await t.checkLedger(accountId);
  });

  it("a refused request (400 { detail }): fails with Luma's detail, never sent elsewhere", async () => {
    const { first, second, t, accountId, apiKey } = await serve({
      submit: () => ({ status: 400, body: { detail: 'Insufficient credits to create generation' } }),
    });
    const task = await run(t, apiKey, textTask('a fox'));
    expect(task).toMatchObject({ state: 'failed', errorCode: 'generation_failed' });
    expect(task.errorMessage).toContain('Insufficient credits');
    expect([first.submits.length, second.submits.length]).toEqual([1, 0]);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
  });

  it('429 with Retry-After on the submit: fails over to the second deployment, once', async () => {
    const { first, second, t, apiKey } = await serve({
      submit: () => ({ status: 429, body: { detail: 'Too many concurrent generations' }, retryAfter: '30' }),
    });
    const task = await run(t, apiKey, textTask('a fox'));
    expect(task.state).toBe('succeeded');
    expect([first.submits.length, second.submits.length]).toEqual([1, 1]);
    expect((await taskRow(t, task.taskId)).deployment).toBe('second');
  });

  it('429 with Retry-After when every deployment refuses: submitted again, not before Retry-After', async () => {
    const { first, second, t, apiKey } = await serve(
      { submit: (i) => (i === 0 ? { status: 429, body: { detail: 'Rate limited' }, retryAfter: '1' } : undefined) },
      { secondGiven: { submit: () => ({ status: 500, body: { detail: 'Internal Server Error' } }) } },
    );
    const task = await run(t, apiKey, textTask('a patient fox'));
    expect(task.state).toBe('succeeded');
    expect([first.submits.length, second.submits.length]).toEqual([2, 1]);
    expect(first.submitTimes[1] - first.submitTimes[0]).toBeGreaterThanOrEqual(1000);
  });

  it('the key refused (401): fails over to the second deployment', async () => {
    const { first, second, t, apiKey } = await serve({ apiKey: 'another-key' });
    const task = await run(t, apiKey, textTask('a fox'));
    expect(task.state).toBe('succeeded');
    expect([first.submits.length, second.submits.length]).toEqual([1, 1]);
  });

  it('at the deadline (Luma has no cancel): the task expires with its hold released, nothing is asked of Luma, the generation still runs there', async () => {
    const { first, t, accountId, apiKey } = await serve({ latencyMs: 60_000 }, { deadlineMs: 1500 });
    const task = await run(t, apiKey, textTask('a long one'));
    expect(task).toMatchObject({ state: 'expired', errorCode: 'deadline_exceeded', credits: 0 });
    expect(first.cancels).toEqual([]);
    const [job] = [...first.jobs.values()];
    expect(job.deleted).toBeUndefined();
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
    await t.checkLedger(accountId);
  });

  it('an output link already expired when fetched: fails with the hold released, nothing kept', async () => {
    const { t, accountId, apiKey } = await serve({ outputLifetimeMs: 0 });
    const task = await run(t, apiKey, textTask('a fox'));
    expect(task).toMatchObject({ state: 'failed', errorCode: 'internal_error' });
    expect((await taskRow(t, task.taskId)).output_json).toBeNull();
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
  });

  it('SIGKILL of the service mid-poll: the restarted service resumes the generation on the same deployment, created once', async () => {
    const luma = await new LumaServer({ latencyMs: 4000, apiKey: KEY }).start();
    servers.push(luma);
    const file = deploymentsFile('luma', { dm: { baseUrl: luma.baseUrl, secretEnv: 'LUMA_KEY' } }, bothModels('ray-2'));
    proc = await startMediaforge(
      'luma',
      {
        MEDIAFORGE_DEPLOYMENTS: '$DIR/deployments.yaml',
        LUMA_KEY: KEY,
        MEDIAFORGE_UPSTREAM_POLL_MS: '200',
        MEDIAFORGE_LEASE_MS: '1500',
      },
      { 'deployments.yaml': file },
    );
    const { apiKey } = await proc.account(1000);
    const created = await fetch(`${proc.url}/api/v1/jobs/createTask`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(textTask('restart')),
    }).then((r) => r.json());
    const taskId = created.data.taskId as string;
    await waitForTask(proc.url, apiKey, taskId, (r) => r.state === 'running');
    await new Promise((r) => setTimeout(r, 1000)); // polled at least once against the running generation
    const pinned = await proc.db.kysely
      .selectFrom('tasks')
      .select(['deployment', 'deployment_handle'])
      .where('id', '=', taskId)
      .executeTakeFirstOrThrow();
    expect(pinned.deployment_handle).not.toBeNull();
    await crash(proc);
    const pollsBefore = luma.polls;
    await proc.restart();
    const task = await waitForTask(proc.url, apiKey, taskId);
    expect(task.state).toBe('succeeded');
    expect(luma.submits.length).toBe(1);
    expect(luma.polls).toBeGreaterThan(pollsBefore);
    expect(luma.downloads).toBe(1);
    const row = await proc.db.kysely
      .selectFrom('tasks')
      .select(['deployment', 'deployment_handle'])
      .where('id', '=', taskId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual(pinned);
  }, 60_000);
  it("a generation that finishes after its task expired (Luma has no cancel) is reconciled: the client stays expired and uncharged; the generation's end and cost recorded without a download; `report margin` shows the cost as abandoned", async () => {
    const upstream = await new LumaServer({ latencyMs: 4500, apiKey: KEY }).start();
    servers.push(upstream);
    const file = deploymentsFile(
      'luma',
      {
        up: { baseUrl: upstream.baseUrl, secretEnv: 'LUMA_KEY', extra: ', cost: { perSecond: "0.02" }' },
      },
      bothModels('ray-2'),
    );
    proc = await startMediaforge(
      'luma-reconcile',
      {
        MEDIAFORGE_DEPLOYMENTS: '$DIR/deployments.yaml',
        LUMA_KEY: KEY,
        MEDIAFORGE_UPSTREAM_POLL_MS: '100',
        MEDIAFORGE_TASK_DEADLINE_SECONDS: '2',
        MEDIAFORGE_UPSTREAM_RECONCILE_POLL_MS: '300',
      },
      { 'deployments.yaml': file },
    );
    const { accountId, apiKey } = await proc.account(1000);
    const taskId = await createOn(proc.url, apiKey, textTask('finishes too late', { duration_seconds: 5 }));
    const expired = await waitForTask(proc.url, apiKey, taskId, undefined, 15_000);
    expect(expired).toMatchObject({ state: 'expired', errorCode: 'deadline_exceeded', credits: 0 });
    expect([...upstream.jobs.values()].every((j) => !j.deleted)).toBe(true);
    const row = await reconciled(proc.db, taskId);
    // 5 s at 0.02 USD a second, in millionths of a USD.
    expect(row).toEqual({ state: 'expired', upstream_final_state: 'succeeded', upstream_cost_micros: 100_000 });
    expect(upstream.downloads).toBe(0);
    expect(upstream.submits.length).toBe(1);
    expect(await waitForTask(proc.url, apiKey, taskId)).toMatchObject({ state: 'expired', credits: 0 });
    const wallet = await proc.db.kysely
      .selectFrom('wallets')
      .select(['held', 'spent'])
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    expect(wallet).toEqual({ held: 0, spent: 0 });
    const margin = await marginReport(proc);
    expect(margin.rows).toEqual([
      expect.objectContaining({
        model: TEXT_MODEL,
        deployment: 'up',
        tasks: 1,
        succeeded: 0,
        upstreamCostUsd: '0.100000',
        abandonedCostUsd: '0.100000',
        marginUsd: '-0.100000',
      }),
    ]);
  }, 60_000);
});
