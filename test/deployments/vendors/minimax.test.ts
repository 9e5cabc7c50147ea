import { afterEach, describe, expect, it } from 'vitest';
import { createTask } from '../../http/helpers.js';
import type { Special } from '../../../support/upstreams/loopback-upstream.js';
import {
  MinimaxServer,
  type MinimaxServerOptions,
  minimaxRefusal,
} from '../../../support/upstreams/vendors/minimax-server.js';
import { type TestService, waitForTerminal } from '../../support/service.js';
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
 * The minimax profile (spec/providers/minimax.yaml) against a loopback MiniMax
 * (support/upstreams/vendors/minimax-server.ts): family_d's text-to-video and image-to-video (768p,
 * which MiniMax calls 768P) on MiniMax-Hailuo-02, which makes 6 or 10 s.
 */
const TEXT = 'vendor_d/family_d/text-to-video';
const IMAGE_MODE = 'vendor_d/family_d/image-to-video';
const UPSTREAM_MODEL = 'MiniMax-Hailuo-02';
const KEY = 'mm-operator-key';
const FRAME = 'https://example.com/first.png';
const FLAGGED = 'FLAG-THIS';

const textTask = (prompt: string) => ({ model: TEXT, input: { prompt, duration_seconds: 6 } });

interface Case {
  given: MinimaxServerOptions;
  want: { state: 'succeeded' | 'failed'; reason?: string; firstSubmits: number; secondSubmits: number };
}

const once =
  (special: Special) =>
  (index: number): Special =>
    index === 0 ? special : undefined;

const CASES: [string, Case][] = [
  [
    "a task that ends Fail (the output judged sensitive, 1027): the task fails with MiniMax's reason, tried nowhere else",
    {
      given: { failWhenPromptContains: FLAGGED },
      want: { state: 'failed', reason: 'output video sensitive', firstSubmits: 1, secondSubmits: 0 },
    },
  ],
  [
    'a 200 answer whose base_resp says rate limit (1002): busy, the second deployment takes the task',
    {
      given: { submit: once(minimaxRefusal(1002, 'rate limit exceeded(RPM)')) },
      want: { state: 'succeeded', firstSubmits: 1, secondSubmits: 1 },
    },
  ],
  [
    "a 200 answer whose base_resp says insufficient balance (1008): the operator's account, the second deployment takes the task",
    {
      given: { submit: once(minimaxRefusal(1008, 'insufficient balance')) },
      want: { state: 'succeeded', firstSubmits: 1, secondSubmits: 1 },
    },
  ],
  [
    'a 200 answer whose base_resp refuses the prompt (1026): the task fails with the reason, never sent elsewhere',
    {
      given: { submit: once(minimaxRefusal(1026, 'input new_sensitive')) },
      want: { state: 'failed', reason: 'input new_sensitive', firstSubmits: 1, secondSubmits: 0 },
    },
  ],
  [
    'a 200 answer refusing the parameters (2013): the task fails with the reason, never sent elsewhere',
    {
      given: { submit: once(minimaxRefusal(2013, 'invalid params, prompt is too long')) },
      want: { state: 'failed', reason: 'invalid params', firstSubmits: 1, secondSubmits: 0 },
    },
  ],
  [
    '429 with Retry-After from the edge: the second deployment takes the task',
    {
      given: {
        submit: once({
          status: 429,
          body: { base_resp: { status_code: 1002, status_msg: 'rate limit' } },
          retryAfter: '30',
        }),
      },
      want: { state: 'succeeded', firstSubmits: 1, secondSubmits: 1 },
    },
  ],
  [
    "the operator's key refused (1004 in a 200 answer): the second deployment takes the task",
    {
      given: { apiKey: 'another-key' },
      want: { state: 'succeeded', firstSubmits: 1, secondSubmits: 1 },
    },
  ],
];

describe("minimax: MiniMax's video generation API through its profile", () => {
  let t: TestService | undefined;
  let proc: MediaforgeProcess | undefined;
  const servers: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await t?.close();
    await proc?.stop();
    [t, proc] = [undefined, undefined];
    for (const server of servers.splice(0)) await server.close();
  });

  async function serve(given: MinimaxServerOptions, settings: { deadlineMs?: number } = {}) {
    const first = await new MinimaxServer({ latencyMs: 300, apiKey: KEY, ...given }).start();
    const second = await new MinimaxServer({ latencyMs: 300, apiKey: KEY }).start();
    servers.push(first, second);
    const routes = [TEXT, IMAGE_MODE].map((model) => ({ model, upstreamModel: UPSTREAM_MODEL }));
    t = await serveDeployments(
      deploymentsFile('minimax', { first: first.url, second: second.url }, routes),
      KEY,
      settings,
    );
    return { first, second, t, ...(await t.account(1000)) };
  }

  it("succeeds: MiniMax's names, Bearer key, the file_id turned into its link by files/retrieve, the file downloaded at once (its link expiring later changes nothing)", async () => {
    const { first, t, accountId, apiKey } = await serve({ resultLifetimeMs: 1000 });
    const created = await createTask(t, apiKey, textTask('a heron over a lake'));
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    expect(task.state).toBe('succeeded');
    expect(first.submits).toEqual([
      {
        authorization: `Bearer ${KEY}`,
        body: {
          model: UPSTREAM_MODEL,
          prompt: 'a heron over a lake',
          duration: 6,
          resolution: '768P',
          prompt_optimizer: false,
        },
      },
    ]);
    expect([first.retrieves, first.downloads]).toEqual([1, 1]);
    const [taskId] = [...first.tasks.keys()];
    const row = await taskRow(t, task.taskId);
    expect([row.deployment, row.deployment_handle?.includes(taskId)]).toEqual(['first', true]);
    const [asset] = task.output.assets;
    expect(asset.url.startsWith(`${t.url}/api/v1/media/`)).toBe(true);
    await new Promise((r) => setTimeout(r, 1100));
    const fileId = first.tasks.get(taskId)!.fileId;
    expect((await fetch(`${first.url}/download/${fileId}.mp4`)).status).toBe(403);
    const media = await fetch(asset.url);
    expect([media.status, media.headers.get('content-type')]).toEqual([200, 'video/mp4']);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: task.credits });
    await t.checkLedger(accountId);
  });

  it('image to video: the frame goes as first_frame_image', async () => {
    const { first, t, apiKey } = await serve({});
    const created = await createTask(t, apiKey, {
      model: IMAGE_MODE,
      input: { prompt: 'the heron takes off', image_url: FRAME, duration_seconds: 10 },
    });
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    expect(task.state).toBe('succeeded');
    expect(first.submits[0].body).toEqual({
      model: UPSTREAM_MODEL,
      prompt: 'the heron takes off',
      first_frame_image: FRAME,
      duration: 10,
      resolution: '768P',
      prompt_optimizer: false,
    });
  });

  it.each(CASES)('%s', async (_name, { given, want }) => {
    const { first, second, t, accountId, apiKey } = await serve(given);
    const created = await createTask(t, apiKey, textTask(`a heron ${given.failWhenPromptContains ?? ''}`));
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

  it('a task that outlives its deadline expires with its hold released; MiniMax has no cancel, so none is sent', async () => {
    const { first, t, accountId, apiKey } = await serve({ latencyMs: 60_000 }, { deadlineMs: 1500 });
    const created = await createTask(t, apiKey, textTask('a very long heron'));
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    expect(task).toMatchObject({ state: 'expired', errorCode: 'deadline_exceeded', credits: 0 });
    expect(first.submits.length).toBe(1);
    expect(first.strays).toEqual([]);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
    await t.checkLedger(accountId);
  });

  it('a status value the profile does not map (Rendering): each such poll is a protocol failure, retried; the task expires at its deadline with its hold released', async () => {
    const { first, t, accountId, apiKey } = await serve(
      { latencyMs: 60_000, queuedShare: 0, runningStatus: 'Rendering' },
      { deadlineMs: 1500 },
    );
    const created = await createTask(t, apiKey, textTask('a heron in a new state'));
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    expect(task).toMatchObject({ state: 'expired', errorCode: 'deadline_exceeded', credits: 0 });
    expect(first.polls).toBeGreaterThan(0);
    expect(first.submits.length).toBe(1);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
    await t.checkLedger(accountId);
  });

  it('429 with Retry-After and no other deployment: the next submit is put off until the Retry-After, not sent again sooner', async () => {
    const only = await new MinimaxServer({
      latencyMs: 300,
      apiKey: KEY,
      submit: once({
        status: 429,
        body: { base_resp: { status_code: 1002, status_msg: 'rate limit' } },
        retryAfter: '20',
      }),
    }).start();
    servers.push(only);
    t = await serveDeployments(
      deploymentsFile('minimax', { first: only.url }, [{ model: TEXT, upstreamModel: UPSTREAM_MODEL }]),
      KEY,
    );
    const { apiKey } = await t.account(1000);
    const created = await createTask(t, apiKey, textTask('a patient heron'));
    const taskId = created.body.data.taskId as string;
    const runItem = await refusedSubmitRecorded(t, taskId, () => only.submits.length);
    // Retry-After: 20 s; without it the next round would come within a second or two.
    expect(runItem.due_at).toBeGreaterThan(Date.now() + 10_000);
    const record = await t.call('GET', `/api/v1/jobs/recordInfo?taskId=${taskId}`, { key: apiKey });
    expect(record.body.data.state).not.toMatch(/failed|succeeded|running/);
    expect(only.submits.length).toBe(1);
  });

  it('SIGKILL of the service mid-poll: the restarted service resumes the task on the same deployment, created once', async () => {
    const minimax = await new MinimaxServer({ latencyMs: 4000, apiKey: KEY }).start();
    servers.push(minimax);
    const file = [
      'upstreams:',
      `  mm: { kind: minimax, baseUrl: "${minimax.url}", secretEnv: MINIMAX_KEY }`,
      'models:',
      `  ${TEXT}:`,
      `    - { upstream: mm, upstreamModel: ${UPSTREAM_MODEL} }`,
    ].join('\n');
    proc = await startMediaforge(
      'minimax',
      {
        MEDIAFORGE_DEPLOYMENTS: '$DIR/deployments.yaml',
        MINIMAX_KEY: KEY,
        MEDIAFORGE_UPSTREAM_POLL_MS: '200',
        MEDIAFORGE_LEASE_MS: '1500',
      },
      { 'deployments.yaml': file },
    );
    const { apiKey } = await proc.account(1000);
    const created = await fetch(`${proc.url}/api/v1/jobs/createTask`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(textTask('a heron, restarted')),
    }).then((r) => r.json());
    const taskId = created.data.taskId as string;
    await waitForTask(proc.url, apiKey, taskId, (r) => r.state === 'running');
    for (const until = Date.now() + 5000; minimax.polls === 0 && Date.now() < until; )
      await new Promise((r) => setTimeout(r, 20));
    expect(minimax.polls).toBeGreaterThan(0);
    const pinned = await proc.db.kysely
      .selectFrom('tasks')
      .select(['deployment', 'deployment_handle'])
      .where('id', '=', taskId)
      .executeTakeFirstOrThrow();
    await crash(proc);
    await proc.restart();
    const task = await waitForTask(proc.url, apiKey, taskId);
    expect(task.state).toBe('succeeded');
    expect([minimax.submits.length, minimax.retrieves, minimax.downloads]).toEqual([1, 1, 1]);
    const row = await proc.db.kysely
      .selectFrom('tasks')
      .select(['deployment', 'deployment_handle'])
      .where('id', '=', taskId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual(pinned);
  }, 60_000);

  it("a job that finishes after its task expired (MiniMax has no cancel) is reconciled: the client's outcome stays expired and uncharged, the job's end and cost are recorded, and `report margin` shows the cost as abandoned", async () => {
    const minimax = await new MinimaxServer({ latencyMs: 4500, apiKey: KEY }).start();
    servers.push(minimax);
    const file = [
      'upstreams:',
      `  mm: { kind: minimax, baseUrl: "${minimax.url}", secretEnv: MINIMAX_KEY, cost: { perSecond: "0.02" } }`,
      'models:',
      `  ${TEXT}:`,
      `    - { upstream: mm, upstreamModel: ${UPSTREAM_MODEL} }`,
    ].join('\n');
    proc = await startMediaforge(
      'minimax-reconcile',
      {
        MEDIAFORGE_DEPLOYMENTS: '$DIR/deployments.yaml',
        MINIMAX_KEY: KEY,
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
      body: JSON.stringify(textTask('a heron that lands too late')),
    }).then((r) => r.json());
    const taskId = created.data.taskId as string;
    const expired = await waitForTask(proc.url, apiKey, taskId, undefined, 15_000);
    expect(expired).toMatchObject({ state: 'expired', errorCode: 'deadline_exceeded', credits: 0 });
    // 6 s at 0.02 USD a second.
    expect(await reconciled(proc.db, taskId)).toEqual({
      state: 'expired',
      upstream_final_state: 'succeeded',
      upstream_cost_micros: 120_000,
    });
    expect([minimax.submits.length, minimax.downloads]).toEqual([1, 0]);
    expect(await walletOf(proc, accountId)).toEqual({ held: 0, spent: 0 });
    const margin = await marginReport(proc);
    expect(margin.rows).toEqual([
      expect.objectContaining({ model: TEXT, deployment: 'mm', tasks: 1, succeeded: 0, abandonedCostUsd: '0.120000' }),
    ]);
  }, 60_000);
});
