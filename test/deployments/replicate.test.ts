// @store-suite: Replicate results are streamed into the store (vitest.config.ts runs it on the local and the S3 store).
import { describe, expect, it } from 'vitest';
import { parseDeployments } from '../../runtime/routing/deployments-file.js';
import { bodyD, createTask, MODEL_D, PRICE_D } from '../http/helpers.js';
import { ReplicateServer, type ReplicateServerOptions } from '../../support/upstreams/replicate-server.js';
import { closedAfterEach, expectFailoverEnd, type FailoverCase, serviceOnPlan } from './support.js';
import { waitForTerminal, type TestService, workItemOf } from '../support/service.js';
import { referenceCopyLink } from '../support/reference-url.js';

const MODEL = 'vendor-d/family-d-r2v';

type Case = FailoverCase<ReplicateServerOptions>;

const CASES: [string, Case][] = [
  [
    "402, the operator's credit run out: the next deployment",
    {
      given: {
        submit: () => ({
          status: 402,
          body: {
            title: 'Insufficient credit',
            detail: 'You have insufficient credit to run this model.',
            status: 402,
          },
        }),
      },
      want: { state: 'succeeded', firstSubmits: 1, secondSubmits: 1 },
    },
  ],
  [
    'a prediction Replicate lost (404 on urls.get): fails with the hold released',
    {
      given: { forgetPredictions: true },
      want: { state: 'failed', errorCode: 'internal_error', firstSubmits: 1, secondSubmits: 0 },
    },
  ],
  [
    'the connection reset after the body (no idempotency key): fails, sent once, nowhere else',
    {
      given: { submit: () => 'reset' },
      want: { state: 'failed', errorCode: 'internal_error', firstSubmits: 1, secondSubmits: 0 },
    },
  ],
];

describe("replicate: Replicate's predictions API against a loopback Replicate", () => {
  const opened = closedAfterEach();

  async function serve(
    given: ReplicateServerOptions,
    settings: { deadlineMs?: number; pollMs?: number; callbacks?: boolean; upstreamModel?: string } = {},
  ) {
    const first = await new ReplicateServer({ latencyMs: 150, apiKey: 'r8-key', ...given }).start();
    const second = await new ReplicateServer({ latencyMs: 150, apiKey: 'r8-key' }).start();
    opened.servers.push(first, second);
    const plan = parseDeployments(
      'deployments.yaml',
      [
        'upstreams:',
        `  first: { kind: replicate, baseUrl: "${first.baseUrl}", secretEnv: REPLICATE_KEY${settings.callbacks ? ', callbacks: true' : ''} }`,
        `  second: { kind: replicate, baseUrl: "${second.baseUrl}", secretEnv: REPLICATE_KEY }`,
        'models:',
        `  ${MODEL_D}:`,
        `    - { upstream: first, upstreamModel: "${settings.upstreamModel ?? MODEL}", priority: 10 }`,
        `    - { upstream: second, upstreamModel: "${MODEL}", priority: 5 }`,
      ].join('\n'),
      { REPLICATE_KEY: 'r8-key' },
    );
    return { first, second, ...(await serviceOnPlan(opened, plan, settings)) };
  }

  const pollItemOf = (t: TestService, taskId: string) => workItemOf(t, taskId, 'poll');

  it("succeeds: Replicate's names, Bearer auth, Cancel-After from the deadline; the output downloaded at once, so its link expiring later changes nothing", async () => {
    const { first, t, accountId, apiKey } = await serve({ outputLifetimeMs: 1000 });
    const created = await createTask(t, apiKey, bodyD('a fox in the snow, Picture 1'));
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    expect(task).toMatchObject({ state: 'succeeded', credits: PRICE_D });
    const [submit] = first.submits;
    expect(submit.path).toBe(`/v1/models/${MODEL}/predictions`);
    expect(submit.authorization).toBe('Bearer r8-key');
    expect(submit.body).toEqual({
      input: {
        prompt: 'a fox in the snow, Picture 1',
        duration: 5,
        aspect_ratio: '16:9',
        resolution: '768p',
        // The service's link to the copy of the customer's image it measured (issue 37 point 3).
        reference_images: [referenceCopyLink(t!.config.publicUrl)],
        enable_prompt_expansion: false,
      },
    });
    expect(submit.cancelAfter).toMatch(/^\d+s$/);
    expect(Number.parseInt(submit.cancelAfter!, 10)).toBeGreaterThan(1700);
    const [id] = [...first.predictions.keys()];
    const row = await t.service.ctx.db.kysely
      .selectFrom('tasks')
      .selectAll()
      .where('id', '=', task.taskId)
      .executeTakeFirstOrThrow();
    expect(row.deployment).toBe('first');
    expect(JSON.parse(row.deployment_handle!)).toEqual({
      id,
      get: `${first.baseUrl}/predictions/${id}`,
      cancel: `${first.baseUrl}/predictions/${id}/cancel`,
    });
    expect(first.downloads).toBe(1);
    // Replicate's link dies an hour (here a second) after the prediction; the service's own link does not.
    await new Promise((r) => setTimeout(r, 1100));
    expect((await fetch(`${first.url}/delivery/${id}/output.mp4`)).status).toBe(404);
    const [asset] = task.output.assets;
    expect(asset.url.startsWith(`${t.url}/api/v1/media/`)).toBe(true);
    const media = await fetch(asset.url);
    expect([media.status, media.headers.get('content-type')]).toEqual([200, 'video/mp4']);
    expect(asset.durationSeconds).toBeCloseTo(5, 0);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: PRICE_D });
    await t.checkLedger(accountId);
  });

  it('owner/name:version goes to POST /predictions with the version', async () => {
    const version = 'a'.repeat(64);
    const { first, t, apiKey } = await serve({}, { upstreamModel: `${MODEL}:${version}` });
    const created = await createTask(t, apiKey, bodyD('a versioned fox, Picture 1'));
    expect((await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000)).state).toBe('succeeded');
    expect(first.submits.map((s) => [s.path, s.body.version])).toEqual([['/v1/predictions', version]]);
  });

  it.each(CASES)('%s', async (_name, { given, want }) => {
    const { first, second, t, accountId, apiKey } = await serve(given);
    const created = await createTask(t, apiKey, bodyD(`a fox ${given.failWhenPromptContains ?? ''}, Picture 1`));
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    await expectFailoverEnd(t, accountId, task, [first.submits.length, second.submits.length], want);
    const row = await t.service.ctx.db.kysely
      .selectFrom('tasks')
      .select('output_json')
      .where('id', '=', task.taskId)
      .executeTakeFirstOrThrow();
    if (want.state === 'failed') expect(row.output_json).toBeNull();
    await t.checkLedger(accountId);
  });

  /** The task's poll item, once it exists; and its poll rescheduled to a time far ahead (not due, not leased). */
  const waitForPollItem = async (t: TestService, taskId: string) => {
    for (const until = Date.now() + 5000; !(await pollItemOf(t, taskId)) && Date.now() < until; )
      await new Promise((r) => setTimeout(r, 20));
    return (await pollItemOf(t, taskId))!;
  };

  it("a signed webhook only wakes the poll; a forged or unsigned one is refused and changes nothing; Replicate's own webhook ends the task, and replayed after it is refused (issue 25, N10)", async () => {
    // Polls far apart: without the webhook the first would be 10 s away.
    const { first, t, apiKey } = await serve({ latencyMs: 2500 }, { pollMs: 20_000, callbacks: true });
    const created = await createTask(t, apiKey, bodyD('called back, Picture 1'));
    const taskId = created.body.data.taskId as string;
    const before = await waitForPollItem(t, taskId);
    expect(before.due_at).toBeGreaterThan(Date.now() + 5000);
    const { webhook, webhook_events_filter: filter } = first.submits[0].body;
    expect(webhook!.startsWith(`${t.url}/upstream-callbacks/first/${taskId}?sig=`)).toBe(true);
    expect(filter).toEqual(['completed']);

    // The URL's token is right, but the signature is not Replicate's (another secret), or missing, or stale: 401, nothing moves.
    const claim = JSON.stringify({ id: 'x', status: 'succeeded', output: 'https://replicate.delivery/x/output.mp4' });
    const post = (headers: Record<string, string>, body = claim) =>
      fetch(webhook!, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    expect((await post(first.sign(claim, `whsec_${Buffer.alloc(24, 7).toString('base64')}`))).status).toBe(401);
    expect((await post({})).status).toBe(401);
    expect((await post(first.sign(claim, first.signingSecret, new Date(Date.now() - 3_600_000)))).status).toBe(401);
    expect((await pollItemOf(t, taskId))!.due_at).toBe(before.due_at);

    // Replicate's own webhook when the prediction completes: the task succeeds long before its next poll.
    const task = await waitForTerminal(t, apiKey, taskId, 8000);
    expect(task.state).toBe('succeeded');
    expect(first.webhooks.map((w) => w.status)).toEqual([204]);
    expect(first.secretFetches).toBe(1);

    // The same signed webhook again, within its 5-minute tolerance: the task has ended, so its URL has too.
    const polls = first.polls;
    const [sent] = first.webhooks;
    const replayed = await post(sent.headers, sent.body);
    expect(replayed.status).toBe(403);
    expect(await replayed.json()).toMatchObject({ code: 40304 });
    expect(first.polls).toBe(polls);
  });

  it('a signed webhook wakes the poll once (the poll is the truth: the task stays running); its replay and further signed posts poll nothing (issue 25, N10)', async () => {
    const { first, t, apiKey } = await serve({ latencyMs: 60_000 }, { pollMs: 20_000, callbacks: true });
    const created = await createTask(t, apiKey, bodyD('called back twice, Picture 1'));
    const taskId = created.body.data.taskId as string;
    const before = await waitForPollItem(t, taskId);
    const { webhook } = first.submits[0].body;
    const claim = JSON.stringify({ id: 'x', status: 'succeeded', output: 'https://replicate.delivery/x/output.mp4' });
    const headers = { 'content-type': 'application/json', ...first.sign(claim) };
    const post = (signed: Record<string, string>) => fetch(webhook!, { method: 'POST', headers: signed, body: claim });
    const pollsBefore = first.polls;

    // Signed with the account's secret, but the prediction still runs: the poll is made due, asks once, and the task stays running.
    expect((await post(headers)).status).toBe(204);
    for (const until = Date.now() + 5000; Date.now() < until; ) {
      const item = (await pollItemOf(t, taskId))!;
      if (first.polls > pollsBefore && item.lease_owner === null && item.due_at > Date.now() + 5000) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const rescheduled = (await pollItemOf(t, taskId))!;
    expect(rescheduled.due_at).not.toBe(before.due_at);
    expect(rescheduled.due_at).toBeGreaterThan(Date.now() + 5000);
    expect(first.polls).toBe(pollsBefore + 1);
    const running = await t.call('GET', `/api/v1/jobs/recordInfo?taskId=${taskId}`, { key: apiKey });
    expect(running.body.data.state).toBe('running');

    // The same webhook replayed 20 times (some at once), and a freshly signed one: answered 204, no poll.
    const answers = await Promise.all(Array.from({ length: 10 }, () => post(headers)));
    for (let i = 0; i < 10; i++) answers.push(await post(headers));
    answers.push(await post({ 'content-type': 'application/json', ...first.sign(claim) }));
    expect(answers.map((a) => a.status)).toEqual(Array(21).fill(204));
    expect((await pollItemOf(t, taskId))!.due_at).toBe(rescheduled.due_at);
    await new Promise((r) => setTimeout(r, 300)); // a poll woken by mistake would have reached the upstream by now
    expect(first.polls).toBe(pollsBefore + 1);
  });
});
