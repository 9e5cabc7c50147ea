import { afterEach, describe, expect, it } from 'vitest';
import { createTask } from '../../http/helpers.js';
import { type TestService, waitForTerminal } from '../../support/service.js';
import {
  DashscopeServer,
  type DashscopeServerOptions,
  dashscopeError,
} from '../../../support/upstreams/vendors/dashscope-server.js';
import type { Special } from '../../../support/upstreams/loopback-upstream.js';
import { crash, type MediaforgeProcess, startMediaforge, waitForTask } from '../support.js';
import {
  deploymentsFile,
  marginReport,
  reconciled,
  refusedSubmitRecorded,
  serveDeployments,
  taskRow,
  walletOf,
} from './harness.js';
import { eventually } from '../../support/eventually.js';

/**
 * The dashscope profile (spec/providers/dashscope.yaml) against a loopback DashScope
 * (support/upstreams/vendors/dashscope-server.ts): family_c-2.6's text-to-video and image-to-video
 * (720p, 16:9, a shot type, a negative prompt) on Wan.
 */
const TEXT = 'vendor_b/family_c-2.6/text-to-video';
const IMAGE_MODE = 'vendor_b/family_c-2.6/image-to-video';
const KEY = 'sk-dashscope-operator';
const FRAME = 'https://example.com/first.png';
const FLAGGED = 'FLAG-THIS';

const textTask = (prompt: string, extra: Record<string, unknown> = {}) => ({
  model: TEXT,
  input: { prompt, ...extra },
});

interface Case {
  given: DashscopeServerOptions;
  want: { state: 'succeeded' | 'failed'; reason?: string; firstSubmits: number; secondSubmits: number };
}

const once =
  (special: Special) =>
  (index: number): Special =>
    index === 0 ? special : undefined;

const CASES: [string, Case][] = [
  [
    "a task that ends FAILED (DataInspectionFailed on the output): the task fails with DashScope's message, tried nowhere else",
    {
      given: { failWhenPromptContains: FLAGGED },
      want: {
        state: 'failed',
        reason: 'Output data may contain inappropriate content.',
        firstSubmits: 1,
        secondSubmits: 0,
      },
    },
  ],
  [
    'queued as SUSPENDED (held back by the platform), then run: succeeds',
    { given: { suspendWhileQueued: true }, want: { state: 'succeeded', firstSubmits: 1, secondSubmits: 0 } },
  ],
  [
    '429 Throttling.RateQuota with Retry-After: busy, the second deployment takes the task',
    {
      given: {
        submit: once(
          dashscopeError(429, 'Throttling.RateQuota', 'Requests rate limit exceeded, please try again later.', '20'),
        ),
      },
      want: { state: 'succeeded', firstSubmits: 1, secondSubmits: 1 },
    },
  ],
  [
    "401 InvalidApiKey (the operator's key refused): the second deployment takes the task",
    { given: { apiKey: 'sk-another' }, want: { state: 'succeeded', firstSubmits: 1, secondSubmits: 1 } },
  ],
  [
    "400 DataInspectionFailed on submit (the input refused): the task fails with DashScope's message, never sent elsewhere",
    {
      given: {
        submit: once(dashscopeError(400, 'DataInspectionFailed', 'Input data may contain inappropriate content.')),
      },
      want: {
        state: 'failed',
        reason: 'Input data may contain inappropriate content.',
        firstSubmits: 1,
        secondSubmits: 0,
      },
    },
  ],
  [
    '400 InvalidParameter: the task fails with the reason, never sent elsewhere',
    {
      given: {
        submit: once(dashscopeError(400, 'InvalidParameter', 'The size is not match the allowed size list.')),
      },
      want: {
        state: 'failed',
        reason: 'The size is not match the allowed size list.',
        firstSubmits: 1,
        secondSubmits: 0,
      },
    },
  ],
];

describe("dashscope: DashScope's asynchronous video synthesis through its profile", () => {
  let t: TestService | undefined;
  let proc: MediaforgeProcess | undefined;
  const servers: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await t?.close();
    await proc?.stop();
    [t, proc] = [undefined, undefined];
    for (const server of servers.splice(0)) await server.close();
  });

  async function serve(given: DashscopeServerOptions, settings: { deadlineMs?: number } = {}) {
    const first = await new DashscopeServer({ latencyMs: 300, apiKey: KEY, ...given }).start();
    const second = await new DashscopeServer({ latencyMs: 300, apiKey: KEY }).start();
    servers.push(first, second);
    const routes = [
      { model: TEXT, upstreamModel: 'wan2.6-t2v' },
      { model: IMAGE_MODE, upstreamModel: 'wan2.6-i2v' },
    ];
    t = await serveDeployments(
      deploymentsFile('dashscope', { first: first.url, second: second.url }, routes),
      KEY,
      settings,
    );
    return { first, second, t, ...(await t.account(1000)) };
  }

  it("succeeds: { model, input, parameters } under DashScope's names, X-DashScope-Async, Bearer key; the video downloaded at once, so its link expiring later changes nothing", async () => {
    const { first, t, accountId, apiKey } = await serve({ resultLifetimeMs: 1000 });
    const created = await createTask(
      t,
      apiKey,
      textTask('a lantern festival', { negative_prompt: 'blur', seed: 7, duration_seconds: 4 }),
    );
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    expect(task.state).toBe('succeeded');
    expect(first.submits).toEqual([
      {
        authorization: `Bearer ${KEY}`,
        async: 'enable',
        body: {
          model: 'wan2.6-t2v',
          input: { prompt: 'a lantern festival', negative_prompt: 'blur' },
          parameters: { resolution: '720P', ratio: '16:9', duration: 4, seed: 7, shot_type: 'single' },
        },
      },
    ]);
    const [id] = [...first.tasks.keys()];
    const row = await taskRow(t, task.taskId);
    expect([row.deployment, row.deployment_handle?.includes(id)]).toEqual(['first', true]);
    expect(first.downloads).toBe(1);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await fetch(`${first.url}/oss/${id}.mp4`)).status).toBe(403);
    const media = await fetch(task.output.assets[0].url);
    expect([media.status, media.headers.get('content-type')]).toEqual([200, 'video/mp4']);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: task.credits });
    await t.checkLedger(accountId);
  });

  it('image to video: the frame goes as input.img_url', async () => {
    const { first, t, apiKey } = await serve({});
    const created = await createTask(t, apiKey, {
      model: IMAGE_MODE,
      input: { prompt: 'the lanterns rise', image_url: FRAME },
    });
    expect((await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000)).state).toBe('succeeded');
    expect(first.submits[0].body.input).toEqual({ prompt: 'the lanterns rise', img_url: FRAME });
    expect(first.submits[0].body.model).toBe('wan2.6-i2v');
  });

  it.each(CASES)('%s', async (_name, { given, want }) => {
    const { first, second, t, accountId, apiKey } = await serve(given);
    const created = await createTask(t, apiKey, textTask(`lanterns ${given.failWhenPromptContains ?? ''}`));
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    expect(task.state).toBe(want.state);
    if (want.reason) {
      expect(task.errorCode).toBe('generation_failed');
      expect(task.errorMessage).toContain(want.reason);
    }
    expect([first.submits.length, second.submits.length]).toEqual([want.firstSubmits, want.secondSubmits]);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: want.state === 'succeeded' ? task.credits : 0 });
    if (want.state === 'failed') expect((await taskRow(t, task.taskId)).output_json).toBeNull();
    await t.checkLedger(accountId);
  });

  it('at the deadline a task still PENDING is cancelled (POST .../cancel); the task expires with its hold released', async () => {
    const { first, t, accountId, apiKey } = await serve({ latencyMs: 60_000, queuedShare: 1 }, { deadlineMs: 1500 });
    const created = await createTask(t, apiKey, textTask('a lantern that never starts'));
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    expect(task).toMatchObject({ state: 'expired', errorCode: 'deadline_exceeded', credits: 0 });
    await eventually(() => first.cancels.length > 0, "the cancel of the first deployment's job", 5_000);
    expect(first.cancels).toEqual([...first.tasks.keys()]);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
    await t.checkLedger(accountId);
  });

  it('at the deadline a RUNNING task cannot be cancelled (UnsupportedOperation): the task expires all the same, its hold released', async () => {
    const { first, t, accountId, apiKey } = await serve({ latencyMs: 60_000, queuedShare: 0 }, { deadlineMs: 1500 });
    const created = await createTask(t, apiKey, textTask('a lantern that runs on'));
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    expect(task).toMatchObject({ state: 'expired', errorCode: 'deadline_exceeded', credits: 0 });
    await eventually(() => first.refusedCancels.length > 0, "the refused cancel of the first deployment's job", 5_000);
    expect([first.cancels, first.refusedCancels]).toEqual([[], [...first.tasks.keys()]]);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
    await t.checkLedger(accountId);
  });

  it('a task DashScope no longer knows (UNKNOWN, unmapped): a protocol failure of each poll, retried; the task expires at its deadline with its hold released', async () => {
    const { first, t, accountId, apiKey } = await serve({ latencyMs: 60_000 }, { deadlineMs: 1500 });
    const created = await createTask(t, apiKey, textTask('a lantern DashScope forgets'));
    await eventually(() => first.polls > 0, 'a poll of the first deployment', 5_000);
    first.tasks.clear();
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    expect(task).toMatchObject({ state: 'expired', errorCode: 'deadline_exceeded', credits: 0 });
    expect(first.submits.length).toBe(1);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
    await t.checkLedger(accountId);
  });

  it('429 with Retry-After and no other deployment: the next submit is put off until the Retry-After, not sent again sooner', async () => {
    const only = await new DashscopeServer({
      latencyMs: 300,
      apiKey: KEY,
      submit: once(
        dashscopeError(429, 'Throttling.RateQuota', 'Requests rate limit exceeded, please try again later.', '20'),
      ),
    }).start();
    servers.push(only);
    t = await serveDeployments(
      deploymentsFile('dashscope', { first: only.url }, [{ model: TEXT, upstreamModel: 'wan2.6-t2v' }]),
      KEY,
    );
    const { apiKey } = await t.account(1000);
    const created = await createTask(t, apiKey, textTask('patient lanterns'));
    const taskId = created.body.data.taskId as string;
    const runItem = await refusedSubmitRecorded(t, taskId, () => only.submits.length);
    // Retry-After: 20 s; without it the next round would come within a second or two.
    expect(runItem.due_at).toBeGreaterThan(Date.now() + 10_000);
    const record = await t.call('GET', `/api/v1/jobs/recordInfo?taskId=${taskId}`, { key: apiKey });
    expect(record.body.data.state).not.toMatch(/failed|succeeded|running/);
    expect(only.submits.length).toBe(1);
  });

  it("a task cancelled on DashScope's side (its console, another client) while the service waits: the task fails with 'The provider canceled the generation.', its hold released, tried nowhere else", async () => {
    const { first, second, t, accountId, apiKey } = await serve({ latencyMs: 60_000, queuedShare: 1 });
    const created = await createTask(t, apiKey, textTask('lanterns someone else stops'));
    await eventually(() => first.polls > 0, 'a poll of the first deployment', 5_000);
    for (const job of first.tasks.values()) job.canceledAt = Date.now();
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    expect(task).toMatchObject({
      state: 'failed',
      errorCode: 'generation_failed',
      errorMessage: 'The provider canceled the generation.',
      credits: 0,
    });
    expect([first.submits.length, second.submits.length, first.cancels.length]).toEqual([1, 0, 0]);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
    await t.checkLedger(accountId);
  });

  it('SIGKILL of the service mid-poll: the restarted service resumes the task on the same deployment, created once', async () => {
    const dashscope = await new DashscopeServer({ latencyMs: 4000, apiKey: KEY }).start();
    servers.push(dashscope);
    const file = [
      'upstreams:',
      `  wan: { kind: dashscope, baseUrl: "${dashscope.url}", secretEnv: DASHSCOPE_KEY }`,
      'models:',
      `  ${TEXT}:`,
      '    - { upstream: wan, upstreamModel: wan2.6-t2v }',
    ].join('\n');
    proc = await startMediaforge(
      'dashscope',
      {
        MEDIAFORGE_DEPLOYMENTS: '$DIR/deployments.yaml',
        DASHSCOPE_KEY: KEY,
        MEDIAFORGE_UPSTREAM_POLL_MS: '200',
        MEDIAFORGE_LEASE_MS: '1500',
      },
      { 'deployments.yaml': file },
    );
    const { apiKey } = await proc.account(1000);
    const created = await fetch(`${proc.url}/api/v1/jobs/createTask`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(textTask('lanterns, restarted')),
    }).then((r) => r.json());
    const taskId = created.data.taskId as string;
    await waitForTask(proc.url, apiKey, taskId, (r) => r.state === 'running');
    await eventually(() => dashscope.polls > 0, 'a poll of the job', 5_000);
    expect(dashscope.polls).toBeGreaterThan(0);
    const pinned = await proc.db.kysely
      .selectFrom('tasks')
      .select(['deployment', 'deployment_handle'])
      .where('id', '=', taskId)
      .executeTakeFirstOrThrow();
    await crash(proc);
    await proc.restart();
    const task = await waitForTask(proc.url, apiKey, taskId);
    expect(task.state).toBe('succeeded');
    expect([dashscope.submits.length, dashscope.downloads]).toEqual([1, 1]);
    const row = await proc.db.kysely
      .selectFrom('tasks')
      .select(['deployment', 'deployment_handle'])
      .where('id', '=', taskId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual(pinned);
  }, 60_000);

  it("a running job whose cancel at the deadline DashScope refuses, finishing later, is reconciled: the client's outcome stays expired and uncharged, the job's end and cost are recorded, and `report margin` shows the cost as abandoned", async () => {
    const server = await new DashscopeServer({ latencyMs: 4500, queuedShare: 0, apiKey: KEY }).start();
    servers.push(server);
    const file = [
      'upstreams:',
      `  wan: { kind: dashscope, baseUrl: "${server.url}", secretEnv: VENDOR_KEY, cost: { perSecond: "0.02" } }`,
      'models:',
      `  ${TEXT}:`,
      `    - { upstream: wan, upstreamModel: wan2.6-t2v }`,
    ].join('\n');
    proc = await startMediaforge(
      'dashscope-reconcile',
      {
        MEDIAFORGE_DEPLOYMENTS: '$DIR/deployments.yaml',
        VENDOR_KEY: KEY,
        MEDIAFORGE_UPSTREAM_POLL_MS: '100',
        MEDIAFORGE_TASK_DEADLINE_SECONDS: '2',
        MEDIAFORGE_UPSTREAM_RECONCILE_POLL_MS: '300',
      },
      { 'deployments.yaml': file },
    );
    const { accountId, apiKey } = await proc.account(1000);
    const created = await fetch(`${proc.url}/api/v1/jobs/createTask`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(textTask('lanterns that finish too late')),
    }).then((r) => r.json());
    const taskId = created.data.taskId as string;
    const expired = await waitForTask(proc.url, apiKey, taskId, undefined, 15_000);
    expect(expired).toMatchObject({ state: 'expired', errorCode: 'deadline_exceeded', credits: 0 });
    // 5 s at 0.02 USD a second.
    expect(await reconciled(proc.db, taskId)).toEqual({
      state: 'expired',
      upstream_final_state: 'succeeded',
      upstream_cost_micros: 100_000,
    });
    expect([server.submits.length, server.cancels.length, server.refusedCancels.length, server.downloads]).toEqual([
      1, 0, 1, 0,
    ]);
    expect(await walletOf(proc, accountId)).toEqual({ held: 0, spent: 0 });
    const margin = await marginReport(proc);
    expect(margin.rows).toEqual([
      expect.objectContaining({ model: TEXT, deployment: 'wan', tasks: 1, succeeded: 0, abandonedCostUsd: '0.100000' }),
    ]);
  }, 60_000);
});
