import { afterEach, describe, expect, it } from 'vitest';
import { createTask } from '../../http/helpers.js';
import { type TestService, waitForTerminal } from '../../support/service.js';
import { ArkServer, type ArkServerOptions, arkError } from '../../../support/upstreams/vendors/ark-server.js';
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
 * The ark profile (spec/providers/ark.yaml) against a loopback Ark
 * (support/upstreams/vendors/ark-server.ts): family_a 2.0's reference-to-video and image-to-video
 * (content[] of typed items) on Seedance.
 */
const REFERENCE = 'vendor_a/family_a-2.0/reference-to-video';
const IMAGE_MODE = 'vendor_a/family_a-2.0/image-to-video';
const UPSTREAM_MODEL = 'dreamina-seedance-2-0-260128';
const KEY = 'ark-operator-key';
const PICTURE_1 = 'https://example.com/one.png';
const PICTURE_2 = 'https://example.com/two.png';
const FIRST = 'https://example.com/first.png';
const LAST = 'https://example.com/last.png';
const FLAGGED = 'FLAG-THIS';

const referenceTask = (prompt: string) => ({
  model: REFERENCE,
  input: { prompt, reference_image_urls: [PICTURE_1, PICTURE_2] },
});

interface Case {
  given: ArkServerOptions;
  want: { state: 'succeeded' | 'failed'; reason?: string; firstSubmits: number; secondSubmits: number };
}

const once =
  (special: Special) =>
  (index: number): Special =>
    index === 0 ? special : undefined;

const CASES: [string, Case][] = [
  [
    '429 RateLimitExceeded with Retry-After: busy, the second deployment takes the task',
    {
      given: {
        submit: once(
          arkError(
            429,
            'RateLimitExceeded.EndpointRPMExceeded',
            'The request has exceeded the rate limit of your endpoint.',
            'TooManyRequests',
            '20',
          ),
        ),
      },
      want: { state: 'succeeded', firstSubmits: 1, secondSubmits: 1 },
    },
  ],
  [
    '429 ServerOverloaded: busy, the second deployment takes the task',
    {
      given: {
        submit: once(
          arkError(
            429,
            'ServerOverloaded',
            'The service is currently unable to handle the request.',
            'TooManyRequests',
          ),
        ),
      },
      want: { state: 'succeeded', firstSubmits: 1, secondSubmits: 1 },
    },
  ],
  [
    "401 AuthenticationError (the operator's key refused): the second deployment takes the task",
    { given: { apiKey: 'another-key' }, want: { state: 'succeeded', firstSubmits: 1, secondSubmits: 1 } },
  ],
  [
    "400 InputTextSensitiveContentDetected on submit: the task fails with Ark's message, never sent elsewhere",
    {
      given: {
        submit: once(
          arkError(
            400,
            'InputTextSensitiveContentDetected',
            'The request failed because the input text may contain sensitive information.',
            'BadRequest',
          ),
        ),
      },
      want: {
        state: 'failed',
        reason: 'The request failed because the input text may contain sensitive information.',
        firstSubmits: 1,
        secondSubmits: 0,
      },
    },
  ],
];

describe("ark: Ark's content generation tasks through its profile", () => {
  let t: TestService | undefined;
  let proc: MediaforgeProcess | undefined;
  const servers: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await t?.close();
    await proc?.stop();
    [t, proc] = [undefined, undefined];
    for (const server of servers.splice(0)) await server.close();
  });

  async function serve(given: ArkServerOptions, settings: { deadlineMs?: number } = {}) {
    const first = await new ArkServer({ latencyMs: 300, apiKey: KEY, ...given }).start();
    const second = await new ArkServer({ latencyMs: 300, apiKey: KEY }).start();
    servers.push(first, second);
    const routes = [REFERENCE, IMAGE_MODE].map((model) => ({ model, upstreamModel: UPSTREAM_MODEL }));
    t = await serveDeployments(deploymentsFile('ark', { first: first.url, second: second.url }, routes), KEY, settings);
    return { first, second, t, ...(await t.account(1000)) };
  }

  it("succeeds: content[] of a text item and one reference_image item per picture, Ark's names, an execution_expires_after Ark accepts; the video downloaded at once, so its link expiring later changes nothing", async () => {
    const { first, t, accountId, apiKey } = await serve({ resultLifetimeMs: 1000 });
    const created = await createTask(t, apiKey, referenceTask('two dancers, Picture 1 and Picture 2'));
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    expect(task.state).toBe('succeeded');
    expect(first.submits).toEqual([
      {
        authorization: `Bearer ${KEY}`,
        body: {
          model: UPSTREAM_MODEL,
          content: [
            { type: 'text', text: 'two dancers, Picture 1 and Picture 2' },
            { type: 'image_url', image_url: { url: PICTURE_1 }, role: 'reference_image' },
            { type: 'image_url', image_url: { url: PICTURE_2 }, role: 'reference_image' },
          ],
          ratio: 'adaptive',
          resolution: '720p',
          duration: 5,
          generate_audio: true,
          watermark: false,
          return_last_frame: false,
          // The task has far less than an hour to its deadline; Ark takes no less than an hour.
          execution_expires_after: 3600,
        },
      },
    ]);
    const [id] = [...first.tasks.keys()];
    const row = await taskRow(t, task.taskId);
    expect([row.deployment, row.deployment_handle?.includes(id)]).toEqual(['first', true]);
    expect(first.downloads).toBe(1);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await fetch(`${first.url}/tos/${id}.mp4`)).status).toBe(403);
    const media = await fetch(task.output.assets[0].url);
    expect([media.status, media.headers.get('content-type')]).toEqual([200, 'video/mp4']);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: task.credits });
    await t.checkLedger(accountId);
  });

  it('image to video: the opening and closing frames as image_url items with role first_frame and last_frame', async () => {
    const { first, t, apiKey } = await serve({});
    const created = await createTask(t, apiKey, {
      model: IMAGE_MODE,
      input: { prompt: 'from dawn to dusk', image_url: FIRST, last_image_url: LAST },
    });
    expect((await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000)).state).toBe('succeeded');
    expect(first.submits[0].body.content).toEqual([
      { type: 'text', text: 'from dawn to dusk' },
      { type: 'image_url', image_url: { url: FIRST }, role: 'first_frame' },
      { type: 'image_url', image_url: { url: LAST }, role: 'last_frame' },
    ]);
  });

  it("an output moderated after the job ran (failed, OutputVideoSensitiveContentDetected at poll time): the task fails with Ark's reason without its request id, the hold released, tried nowhere else", async () => {
    const { first, second, t, accountId, apiKey } = await serve({ failWhenPromptContains: FLAGGED });
    const created = await createTask(t, apiKey, referenceTask(`dancers ${FLAGGED}, Picture 1`));
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    expect(task).toMatchObject({ state: 'failed', errorCode: 'generation_failed', credits: 0 });
    expect(task.errorMessage).toContain(
      'The request failed because the output video may contain sensitive information.',
    );
    const [arkTask] = [...first.tasks.values()];
    expect(task.errorMessage).not.toContain(arkTask.requestId);
    expect([first.submits.length, second.submits.length]).toEqual([1, 0]);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
    await t.checkLedger(accountId);
  });

  it.each(CASES)('%s', async (_name, { given, want }) => {
    const { first, second, t, accountId, apiKey } = await serve(given);
    const created = await createTask(t, apiKey, referenceTask('dancers, Picture 1'));
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

  it('at the deadline a queued task is cancelled (DELETE); the task expires with its hold released', async () => {
    const { first, t, accountId, apiKey } = await serve({ latencyMs: 60_000, queuedShare: 1 }, { deadlineMs: 1500 });
    const created = await createTask(t, apiKey, referenceTask('dancers who never start, Picture 1'));
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    expect(task).toMatchObject({ state: 'expired', errorCode: 'deadline_exceeded', credits: 0 });
    await eventually(() => first.cancels.length > 0, "the cancel of the first deployment's job", 5_000);
    expect(first.cancels).toEqual([...first.tasks.keys()]);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
    await t.checkLedger(accountId);
  });

  it('at the deadline a running task cannot be cancelled: the task expires all the same, its hold released', async () => {
    const { first, t, accountId, apiKey } = await serve({ latencyMs: 60_000, queuedShare: 0 }, { deadlineMs: 1500 });
    const created = await createTask(t, apiKey, referenceTask('dancers who run on, Picture 1'));
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    expect(task).toMatchObject({ state: 'expired', errorCode: 'deadline_exceeded', credits: 0 });
    await eventually(() => first.refusedCancels.length > 0, "the refused cancel of the first deployment's job", 5_000);
    expect([first.cancels, first.refusedCancels]).toEqual([[], [...first.tasks.keys()]]);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
    await t.checkLedger(accountId);
  });

  it('429 with Retry-After and no other deployment: the next submit is put off until the Retry-After, not sent again sooner', async () => {
    const only = await new ArkServer({
      latencyMs: 300,
      apiKey: KEY,
      submit: once(
        arkError(
          429,
          'RateLimitExceeded.EndpointRPMExceeded',
          'The request has exceeded the rate limit of your endpoint.',
          'TooManyRequests',
          '20',
        ),
      ),
    }).start();
    servers.push(only);
    t = await serveDeployments(
      deploymentsFile('ark', { first: only.url }, [{ model: REFERENCE, upstreamModel: UPSTREAM_MODEL }]),
      KEY,
    );
    const { apiKey } = await t.account(1000);
    const created = await createTask(t, apiKey, referenceTask('patient dancers, Picture 1'));
    const taskId = created.body.data.taskId as string;
    const runItem = await refusedSubmitRecorded(t, taskId, () => only.submits.length);
    // Retry-After: 20 s; without it the next round would come within a second or two.
    expect(runItem.due_at).toBeGreaterThan(Date.now() + 10_000);
    const record = await t.call('GET', `/api/v1/jobs/recordInfo?taskId=${taskId}`, { key: apiKey });
    expect(record.body.data.state).not.toMatch(/failed|succeeded|running/);
    expect(only.submits.length).toBe(1);
  });

  it("a task cancelled on Ark's side (its console, another client) while the service waits: the task fails with 'The provider canceled the generation.', its hold released, tried nowhere else", async () => {
    const { first, second, t, accountId, apiKey } = await serve({ latencyMs: 60_000, queuedShare: 1 });
    const created = await createTask(t, apiKey, referenceTask('dancers someone else stops, Picture 1'));
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
    const ark = await new ArkServer({ latencyMs: 4000, apiKey: KEY }).start();
    servers.push(ark);
    const file = [
      'upstreams:',
      `  seedance: { kind: ark, baseUrl: "${ark.url}", secretEnv: ARK_KEY }`,
      'models:',
      `  ${REFERENCE}:`,
      `    - { upstream: seedance, upstreamModel: ${UPSTREAM_MODEL} }`,
    ].join('\n');
    proc = await startMediaforge(
      'ark',
      {
        MEDIAFORGE_DEPLOYMENTS: '$DIR/deployments.yaml',
        ARK_KEY: KEY,
        MEDIAFORGE_UPSTREAM_POLL_MS: '200',
        MEDIAFORGE_LEASE_MS: '1500',
      },
      { 'deployments.yaml': file },
    );
    const { apiKey } = await proc.account(1000);
    const created = await fetch(`${proc.url}/api/v1/jobs/createTask`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(referenceTask('dancers, restarted, Picture 1')),
    }).then((r) => r.json());
    const taskId = created.data.taskId as string;
    await waitForTask(proc.url, apiKey, taskId, (r) => r.state === 'running');
    await eventually(() => ark.polls > 0, 'a poll of the job', 5_000);
    expect(ark.polls).toBeGreaterThan(0);
    const pinned = await proc.db.kysely
      .selectFrom('tasks')
      .select(['deployment', 'deployment_handle'])
      .where('id', '=', taskId)
      .executeTakeFirstOrThrow();
    await crash(proc);
    await proc.restart();
    const task = await waitForTask(proc.url, apiKey, taskId);
    expect(task.state).toBe('succeeded');
    expect([ark.submits.length, ark.downloads]).toEqual([1, 1]);
    const row = await proc.db.kysely
      .selectFrom('tasks')
      .select(['deployment', 'deployment_handle'])
      .where('id', '=', taskId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual(pinned);
  }, 60_000);

  it("a running job whose cancel at the deadline Ark refuses, finishing later, is reconciled: the client's outcome stays expired and uncharged, the job's end and cost are recorded, and `report margin` shows the cost as abandoned", async () => {
    const server = await new ArkServer({ latencyMs: 4500, queuedShare: 0, apiKey: KEY }).start();
    servers.push(server);
    const file = [
      'upstreams:',
      `  seedance: { kind: ark, baseUrl: "${server.url}", secretEnv: VENDOR_KEY, cost: { perSecond: "0.02" } }`,
      'models:',
      `  ${REFERENCE}:`,
      `    - { upstream: seedance, upstreamModel: ${UPSTREAM_MODEL} }`,
    ].join('\n');
    proc = await startMediaforge(
      'ark-reconcile',
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
      body: JSON.stringify(referenceTask('dancers who finish too late, Picture 1')),
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
      expect.objectContaining({
        model: REFERENCE,
        deployment: 'seedance',
        tasks: 1,
        succeeded: 0,
        abandonedCostUsd: '0.100000',
      }),
    ]);
  }, 60_000);
});
