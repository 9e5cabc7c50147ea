// @store-suite: fal results are streamed into the store (vitest.config.ts runs it on the local and the S3 store).
import { describe, expect, it } from 'vitest';
import { parseDeployments } from '../../runtime/routing/deployments-file.js';
import { bodyD, createTask, MODEL_D } from '../http/helpers.js';
import { FalQueueServer, type FalServerOptions } from '../../support/upstreams/fal-queue-server.js';
import { closedAfterEach, expectFailoverEnd, type FailoverCase, serviceOnPlan } from './support.js';
import { waitForTerminal, workItemOf } from '../support/service.js';
import { referenceCopyLink } from '../support/reference-url.js';

const APP = 'fal-ai/family-d/reference-to-video';

type Case = FailoverCase<FalServerOptions>;

const CASES: [string, Case][] = [
  [
    '503 on submit: the next deployment',
    {
      given: { submit: () => ({ status: 503, body: { detail: 'Service Unavailable' } }) },
      want: { state: 'succeeded', firstSubmits: 1, secondSubmits: 1 },
    },
  ],
  [
    'a request fal lost (404 on its status): fails with the hold released',
    {
      given: { forgetRequests: true },
      want: { state: 'failed', errorCode: 'internal_error', firstSubmits: 1, secondSubmits: 0 },
    },
  ],
  [
    'the connection reset after the body (fal has no idempotency key): fails, sent once, nowhere else',
    {
      given: { submit: () => 'reset' },
      want: { state: 'failed', errorCode: 'internal_error', firstSubmits: 1, secondSubmits: 0 },
    },
  ],
];

describe("fal-queue: fal's queue protocol against a loopback fal", () => {
  const opened = closedAfterEach();

  async function serve(
    given: FalServerOptions,
    settings: { deadlineMs?: number; pollMs?: number; callbacks?: boolean; model?: string } = {},
  ) {
    const first = await new FalQueueServer({ latencyMs: 150, apiKey: 'fal-key', ...given }).start();
    const second = await new FalQueueServer({ latencyMs: 150, apiKey: 'fal-key' }).start();
    opened.servers.push(first, second);
    const plan = parseDeployments(
      'deployments.yaml',
      [
        'upstreams:',
        `  first: { kind: fal-queue, baseUrl: "${first.baseUrl}", secretEnv: FAL_KEY${settings.callbacks ? ', callbacks: true' : ''}, cost: { perSecond: "0.07" } }`,
        `  second: { kind: fal-queue, baseUrl: "${second.baseUrl}", secretEnv: FAL_KEY }`,
        'models:',
        `  ${settings.model ?? MODEL_D}:`,
        `    - { upstream: first, upstreamModel: ${APP}, priority: 10 }`,
        `    - { upstream: second, upstreamModel: ${APP}, priority: 5 }`,
      ].join('\n'),
      { FAL_KEY: 'fal-key' },
    );
    return { first, second, ...(await serviceOnPlan(opened, plan, settings)) };
  }

  it("succeeds: the input in fal's names, `Key` auth, the deadline as x-fal-request-timeout; the clip stored and served from the service's own link", async () => {
    const { first, t, accountId, apiKey } = await serve({});
    const created = await createTask(t, apiKey, bodyD('a fox in the snow, Picture 1', { duration_seconds: 4 }));
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    expect(task.state).toBe('succeeded');
    expect(task.credits).toBe(created.body.data.credits);
    const [submit] = first.submits;
    expect(submit.path).toBe(`/${APP}`);
    expect(submit.authorization).toBe('Key fal-key');
    // duration_seconds goes as fal's `duration`, a string; the other fields under their own names; no webhook unless asked.
    expect(submit.body).toEqual({
      prompt: 'a fox in the snow, Picture 1',
      duration: '4',
      aspect_ratio: '16:9',
      resolution: '768p',
      // The service's link to the copy of the customer's image it measured (issue 37 point 3).
      reference_image_urls: [referenceCopyLink(t!.config.publicUrl)],
      enable_prompt_expansion: false,
    });
    expect(submit.webhook).toBeNull();
    expect(Number(submit.requestTimeout)).toBeGreaterThan(1700);
    expect(Number(submit.requestTimeout)).toBeLessThanOrEqual(1800);
    // Pinned: the deployment and fal's request (its status, result and cancel links) are on the task.
    const row = await t.service.ctx.db.kysely
      .selectFrom('tasks')
      .selectAll()
      .where('id', '=', task.taskId)
      .executeTakeFirstOrThrow();
    const [requestId] = [...first.requests.keys()];
    expect(row.deployment).toBe('first');
    expect(JSON.parse(row.deployment_handle!)).toEqual({
      id: requestId,
      status: `${first.url}/fal-ai/family-d/requests/${requestId}/status`,
      response: `${first.url}/fal-ai/family-d/requests/${requestId}`,
      cancel: `${first.url}/fal-ai/family-d/requests/${requestId}/cancel`,
    });
    expect(row.upstream_cost_micros).toBe(4 * 70_000);
    // The client sees the service's own link, to the bytes fal served.
    const [asset] = task.output.assets;
    expect(asset.url.startsWith(`${t.url}/api/v1/media/`)).toBe(true);
    expect(asset.durationSeconds).toBeCloseTo(4, 0);
    const key = (JSON.parse(row.output_json!) as { key: string }[])[0].key;
    const served = Buffer.from(await (await fetch(asset.url)).arrayBuffer());
    // The stored bytes read through the service's own store (local, database or S3 in the s3 projects).
    const stored = await t.service.ctx.blobs.read(key);
    const chunks: Buffer[] = [];
    for await (const chunk of stored!.stream) chunks.push(Buffer.from(chunk as Buffer));
    expect(served.equals(Buffer.concat(chunks))).toBe(true);
    expect(first.downloads).toBe(1);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: task.credits });
    await t.checkLedger(accountId);
  });

  it.each(CASES)('%s', async (_name, { given, want }) => {
    const { first, second, t, accountId, apiKey } = await serve(given);
    const created = await createTask(t, apiKey, bodyD(`a fox ${given.refuseWhenPromptContains ?? ''}, Picture 1`));
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    await expectFailoverEnd(t, accountId, task, [first.submits.length, second.submits.length], want);
    await t.checkLedger(accountId);
  });

  it('an input fal has no counterpart for (a watermark) is not served there: 400 40030 naming the field (retrying never helps), nothing held; the default is sent as nothing', async () => {
    const model = 'vendor_a/family_a-2.0-mini/text-to-video';
    const { first, second, t, accountId, apiKey } = await serve({}, { model });
    const refused = await createTask(t, apiKey, { model, input: { prompt: 'a fox', watermark: true } });
    expect([refused.status, refused.body.code]).toEqual([400, 40030]);
    expect(refused.body.data.errors).toEqual([
      expect.objectContaining({ path: 'input.watermark', rule: 'not_served' }),
    ]);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
    const served = await createTask(t, apiKey, {
      model,
      input: { prompt: 'a fox', watermark: false, duration_seconds: 4 },
    });
    expect((await waitForTerminal(t, apiKey, served.body.data.taskId, 15_000)).state).toBe('succeeded');
    expect([first.submits.length, second.submits.length]).toEqual([1, 0]);
    expect(first.submits[0].body).toEqual({
      prompt: 'a fox',
      duration: '4',
      aspect_ratio: 'adaptive',
      resolution: '720p',
      generate_audio: true,
    });
  });

  it('fal_webhook wakes the poll at once (fal calls the signed URL when the request ends); a forged call changes nothing', async () => {
    // Polls far apart: without the webhook the first would be 10 s away.
    const { first, t, apiKey } = await serve({ latencyMs: 1500 }, { pollMs: 20_000, callbacks: true });
    const created = await createTask(t, apiKey, bodyD('called back, Picture 1'));
    const taskId = created.body.data.taskId as string;
    const pollItem = () => workItemOf(t, taskId, 'poll');
    for (const until = Date.now() + 5000; !(await pollItem()) && Date.now() < until; )
      await new Promise((r) => setTimeout(r, 20));
    const before = await pollItem();
    expect(before!.due_at).toBeGreaterThan(Date.now() + 5000);
    const webhook = first.submits[0].webhook!;
    expect(webhook.startsWith(`${t.url}/upstream-callbacks/first/${taskId}?sig=`)).toBe(true);

    const forged = new URL(webhook);
    forged.searchParams.set('sig', 'A'.repeat(43));
    const answer = await fetch(forged, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ request_id: 'x', status: 'OK', payload: {} }),
    });
    expect(answer.status).toBe(401);
    expect((await pollItem())!.due_at).toBe(before!.due_at);

    const task = await waitForTerminal(t, apiKey, taskId, 8000);
    expect(task.state).toBe('succeeded');
    expect(first.webhooks).toEqual([{ url: webhook, status: 204 }]);
    expect((await pollItem())!.done_at!).toBeLessThan(before!.due_at);
  });
});
