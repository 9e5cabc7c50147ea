import { openTaskCount } from '../support/stored-rows.js';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDeployments } from '../../runtime/routing/deployments-file.js';
import { bodyD, createTask, MODEL_D, PRICE_D } from '../http/helpers.js';
import { JobsProtocolServer, type JobsServerOptions } from '../../support/upstreams/jobs-protocol-server.js';
import { OpenAiVideosServer, type OpenAiServerOptions } from '../../support/upstreams/openai-videos-server.js';
import { closedAfterEach, deploymentOf, serviceOnPlan } from './support.js';
import { waitForTerminal } from '../support/service.js';

/**
 * An upstream job through its whole life, against loopback servers written from each protocol as
 * published (support/upstreams/jobs-protocol-server.ts, openai-videos-server.ts): the deadline cancels
 * the upstream job where the protocol can, a job the upstream lost (404 on poll) fails the task, a
 * download cut short leaves nothing and is fetched again, maxInFlight holds, and an upstream
 * callback makes the task's poll due at once. Every hold resolves once.
 */
type Upstream = { kind: 'jobs'; options: JobsServerOptions } | { kind: 'openai-videos'; options: OpenAiServerOptions };

describe('an upstream job from submit to end', () => {
  const opened = closedAfterEach();

  async function serve(
    upstream: Upstream,
    settings: { deadlineMs?: number; pollMs?: number; upstreamExtra?: string; guarded?: boolean } = {},
  ) {
    const server =
      upstream.kind === 'jobs'
        ? await new JobsProtocolServer(upstream.options).start()
        : await new OpenAiVideosServer(upstream.options).start();
    opened.servers.push(server);
    const plan = parseDeployments(
      'deployments.yaml',
      [
        'upstreams:',
        `  up: { kind: ${upstream.kind}, baseUrl: "${server.baseUrl}"${settings.upstreamExtra ?? ''} }`,
        'models:',
        `  ${MODEL_D}:`,
        '    - upstream: up',
      ].join('\n'),
    );
    // The outbound guard as in production where asked: loopback refused (the upstream's own origin excepted).
    const guard = settings.guarded ? { webhookAllowPrivate: false, webhookAllowInsecure: false } : {};
    return { server, ...(await serviceOnPlan(opened, plan, settings, guard)) };
  }

  it.each([
    ['jobs', { kind: 'jobs', options: { latencyMs: 60_000 } }],
    ['openai-videos', { kind: 'openai-videos', options: { latencyMs: 60_000 } }],
  ] as [string, Upstream][])(
    '%s: at the deadline the task expires, its hold is released, the upstream job is cancelled where the protocol allows',
    async (kind, upstream) => {
      const { server, t, accountId, apiKey } = await serve(upstream, { deadlineMs: 3000 }); // room for the check lane's fetch of the reference before the submit
      const created = await createTask(t, apiKey, bodyD('a long one, Picture 1'));
      const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
      expect(task).toMatchObject({ state: 'expired', errorCode: 'deadline_exceeded', credits: 0 });
      expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
      await t.checkLedger(accountId);
      const row = await deploymentOf(t, task.taskId);
      expect(row.deployment).toBe('up');
      if (kind === 'openai-videos') {
        // DELETE is the protocol's only way to stop a video: sent once the task expired.
        const deletes = (server as OpenAiVideosServer).deletes;
        for (const until = Date.now() + 5000; deletes.length === 0 && Date.now() < until; )
          await new Promise((r) => setTimeout(r, 50));
        expect(deletes).toEqual([row.deployment_handle]);
      } else {
        // The jobs protocol has no cancel: nothing is queued for it.
        const cancels = await t.service.ctx.db.kysely
          .selectFrom('work_items')
          .select('id')
          .where('task_id', '=', task.taskId)
          .where('kind', '=', 'upstream-cancel')
          .execute();
        expect(cancels).toEqual([]);
      }
    },
  );

  it.each([
    ['jobs', { kind: 'jobs', options: { forgetTasks: true } }],
    ['openai-videos', { kind: 'openai-videos', options: { forgetVideos: true } }],
  ] as [string, Upstream][])(
    '%s: a job the upstream lost (404 on poll) fails the task with its hold released',
    async (_kind, upstream) => {
      const { t, accountId, apiKey } = await serve(upstream);
      const created = await createTask(t, apiKey, bodyD('lost, Picture 1'));
      const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
      expect(task).toMatchObject({ state: 'failed', errorCode: 'internal_error', credits: 0 });
      expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
      await t.checkLedger(accountId);
    },
  );

  it('429s on polls (more than the 8 failures in a row that give a task up) only pace the polls: the task succeeds', async () => {
    const { server, t, accountId, apiKey } = await serve({ kind: 'jobs', options: { latencyMs: 100, busyPolls: 12 } });
    const created = await createTask(t, apiKey, bodyD('busy, Picture 1'));
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    expect(task.state).toBe('succeeded');
    expect((server as JobsProtocolServer).polls).toBeGreaterThan(12);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: PRICE_D });
  });

  it("a result link off the upstream's origin goes through the outbound guard: a loopback one is refused, the task fails, nothing is fetched", async () => {
    // The customer's references go as they are (`references: original`): the guard refuses the loopback reference host too.
    const { server, t, accountId, apiKey } = await serve(
      { kind: 'jobs', options: { latencyMs: 100, resultHost: 'localhost' } },
      { guarded: true, upstreamExtra: ', references: original' },
    );
    const created = await createTask(t, apiKey, bodyD('elsewhere, Picture 1'));
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    expect(task).toMatchObject({ state: 'failed', errorCode: 'internal_error', credits: 0 });
    expect((server as JobsProtocolServer).downloads).toBe(0);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
  });

  it('a download cut short keeps nothing; the next poll fetches the result again and the task succeeds once', async () => {
    const { server, t, accountId, apiKey } = await serve({
      kind: 'jobs',
      options: { latencyMs: 100, cutFirstDownload: true },
    });
    const created = await createTask(t, apiKey, bodyD('cut, Picture 1'));
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    expect(task.state).toBe('succeeded');
    expect((server as JobsProtocolServer).downloads).toBe(2);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: PRICE_D });
    // One object, whole, and no partial write left behind.
    // One output, under a key of the claim that stored it (issue 37: keys per claim); the cut one left nothing.
    expect(readdirSync(join(t.config.dataDir, 'blobs', 'outputs', task.taskId))).toEqual([
      expect.stringMatching(/^c_[\w-]+-0\.mp4$/),
    ]);
    expect(readdirSync(join(t.config.dataDir, 'blobs', '.partial'))).toEqual([]);
    await t.checkLedger(accountId);
  });

  it('maxInFlight: never more tasks submitted and not ended than the cap; the others wait their turn', async () => {
    const { server, t, accountId, apiKey } = await serve(
      { kind: 'jobs', options: { latencyMs: 300 } },
      // One account's tasks here: its share is the whole cap (the default share, half, is tested below).
      { upstreamExtra: ', maxInFlight: 2, maxInFlightPerAccount: 2' },
    );
    const ids = await Promise.all(
      Array.from(
        { length: 6 },
        async (_, i) => (await createTask(t, apiKey, bodyD(`capped ${i}, Picture 1`))).body.data.taskId as string,
      ),
    );
    let peak = 0;
    const sampler = setInterval(async () => {
      peak = Math.max(peak, await openTaskCount(t, 'up'));
    }, 20);
    const tasks = await Promise.all(ids.map((id) => waitForTerminal(t, apiKey, id, 20_000)));
    clearInterval(sampler);
    expect(tasks.map((x) => x.state)).toEqual(Array(6).fill('succeeded'));
    const upstream = server as JobsProtocolServer;
    expect(upstream.maxInFlight).toBe(2);
    expect(peak).toBeLessThanOrEqual(2);
    expect(upstream.jobs.size).toBe(6);
    await t.checkLedger(accountId);
  });

  it("one account's backlog cannot take every slot: another account's task gets one at once and succeeds while the first's wait (issue 25, N5)", async () => {
    // maxInFlight 2 and no maxInFlightPerAccount: each account's share is half, 1 slot.
    const { server, t, accountId, apiKey } = await serve(
      { kind: 'jobs', options: { latencyMs: 1500 } },
      { upstreamExtra: ', maxInFlight: 2' },
    );
    expect((await t.call('GET', '/readyz')).body.deployments).toMatchObject([
      { name: 'up', maxInFlight: 2, maxInFlightPerAccount: 1 },
    ]);
    const upstream = server as JobsProtocolServer;
    const a = await Promise.all(
      Array.from(
        { length: 4 },
        async (_, i) => (await createTask(t, apiKey, bodyD(`account A ${i}, Picture 1`))).body.data.taskId as string,
      ),
    );
    for (const until = Date.now() + 5000; upstream.submits.length === 0 && Date.now() < until; )
      await new Promise((r) => setTimeout(r, 20));
    const b = await t.account(1000);
    const bTask = (await createTask(t, b.apiKey, bodyD('account B, Picture 1'))).body.data.taskId as string;
    const bDone = await waitForTerminal(t, b.apiKey, bTask, 15_000);
    expect(bDone.state).toBe('succeeded');
    // B's task was the second submitted: A's other three waited with the second slot free.
    expect(upstream.submits.map((s) => /^account (A|B)\b/.exec(String(s.body.input?.prompt))?.[1]).slice(0, 2)).toEqual(
      ['A', 'B'],
    );
    const waiting = await t.service.ctx.db.kysely
      .selectFrom('tasks')
      .select('id')
      .where('account_id', '=', accountId)
      .where('state', '=', 'queued')
      .where('deployment', 'is', null)
      .execute();
    expect(waiting.length).toBeGreaterThan(0);
    // A's tasks waited for their turn, never failed.
    const aDone = await Promise.all(a.map((id) => waitForTerminal(t, apiKey, id, 30_000)));
    expect(aDone.map((x) => x.state)).toEqual(Array(4).fill('succeeded'));
    expect(upstream.maxInFlight).toBeLessThanOrEqual(2);
    await t.checkLedger(accountId);
    await t.checkLedger(b.accountId);
  });

  it("an upstream callback makes the pinned task's poll due at once; a wrong token or another task's changes nothing", async () => {
    // No hints from the upstream and polls far apart: without the callback the first poll would be 10 s away.
    const { server, t, apiKey } = await serve(
      { kind: 'jobs', options: { latencyMs: 1500, withoutHints: true } },
      { pollMs: 20_000, upstreamExtra: ', callbacks: true' },
    );
    const upstream = server as JobsProtocolServer;
    const created = await createTask(t, apiKey, bodyD('called back, Picture 1'));
    const taskId = created.body.data.taskId as string;
    const pollItem = () =>
      t!.service.ctx.db.kysely
        .selectFrom('work_items')
        .selectAll()
        .where('task_id', '=', taskId)
        .where('kind', '=', 'poll')
        .executeTakeFirst();
    for (const until = Date.now() + 5000; !(await pollItem()) && Date.now() < until; )
      await new Promise((r) => setTimeout(r, 20));
    const before = await pollItem();
    expect(before!.due_at).toBeGreaterThan(Date.now() + 5000);
    const callBackUrl = upstream.submits[0].body.callBackUrl!;
    expect(callBackUrl.startsWith(`${t.url}/upstream-callbacks/up/${taskId}?sig=`)).toBe(true);

    // Forged: a wrong token, and the token of this task used for another: refused, nothing moves.
    const post = (url: string) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const forged = new URL(callBackUrl);
    forged.searchParams.set('sig', 'A'.repeat(43));
    expect((await post(forged.href)).status).toBe(401);
    expect((await post(callBackUrl.replace(taskId, 'task_someoneelse1'))).status).toBe(401);
    expect((await pollItem())!.due_at).toBe(before!.due_at);

    // The upstream's own callback when its job ends: the poll runs then, long before it was due.
    const task = await waitForTerminal(t, apiKey, taskId, 8000);
    expect(task.state).toBe('succeeded');
    expect(upstream.callbacks).toEqual([{ url: callBackUrl, status: 204 }]);
    const after = await pollItem();
    expect(after!.done_at).not.toBeNull();
    expect(after!.done_at!).toBeLessThan(before!.due_at);
  });
  it('the same callback posted 100 times wakes one poll (counted at the upstream); the task stays running (issue 25, N10)', async () => {
    const { server, t, apiKey } = await serve(
      { kind: 'jobs', options: { latencyMs: 60_000, withoutHints: true } },
      { pollMs: 20_000, upstreamExtra: ', callbacks: true' },
    );
    const upstream = server as JobsProtocolServer;
    const created = await createTask(t, apiKey, bodyD('reposted, Picture 1'));
    const taskId = created.body.data.taskId as string;
    const pollItem = async () =>
      (await t!.service.ctx.db.kysely
        .selectFrom('work_items')
        .selectAll()
        .where('task_id', '=', taskId)
        .where('kind', '=', 'poll')
        .executeTakeFirst())!;
    for (const until = Date.now() + 5000; !(await pollItem()) && Date.now() < until; )
      await new Promise((r) => setTimeout(r, 20));
    const before = await pollItem();
    expect(before.due_at).toBeGreaterThan(Date.now() + 5000);
    const pollsBefore = upstream.polls;
    const callBackUrl = upstream.submits[0].body.callBackUrl!;
    const post = () =>
      fetch(callBackUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }).then(
        (r) => r.status,
      );

    // 50 at once: one of them wakes the poll, which asks the upstream once and is rescheduled far ahead.
    const statuses = await Promise.all(Array.from({ length: 50 }, post));
    for (const until = Date.now() + 5000; Date.now() < until; ) {
      const item = await pollItem();
      if (upstream.polls > pollsBefore && item.lease_owner === null && item.due_at > Date.now() + 5000) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const rescheduled = await pollItem();
    expect(rescheduled.due_at).toBeGreaterThan(Date.now() + 5000);
    // Then 50 more, one after the other, each after that poll: replays, none wakes it again.
    for (let i = 0; i < 50; i++) statuses.push(await post());
    expect(statuses).toEqual(Array(100).fill(204));
    expect((await pollItem()).due_at).toBe(rescheduled.due_at);
    await new Promise((r) => setTimeout(r, 300)); // a poll woken by mistake would have reached the upstream by now
    expect(upstream.polls).toBe(pollsBefore + 1);
    const running = await t.call('GET', `/api/v1/jobs/recordInfo?taskId=${taskId}`, { key: apiKey });
    expect(running.body.data.state).toBe('running');
  });

  it('a callback after its task ended is refused, 403 link_expired, and polls nothing (issue 25, N10)', async () => {
    const { server, t, apiKey } = await serve(
      { kind: 'jobs', options: { latencyMs: 200 } },
      { upstreamExtra: ', callbacks: true' },
    );
    const upstream = server as JobsProtocolServer;
    const created = await createTask(t, apiKey, bodyD('ended, Picture 1'));
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 10_000);
    expect(task.state).toBe('succeeded');
    const callBackUrl = upstream.submits[0].body.callBackUrl!;
    const polls = upstream.polls;
    for (const body of ['{}', JSON.stringify({ code: 200, data: { taskId: task.taskId, state: 'succeeded' } })]) {
      const late = await fetch(callBackUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(late.status).toBe(403);
      expect(await late.json()).toMatchObject({ code: 40304 });
    }
    expect(upstream.polls).toBe(polls);
  });
});
