// @store-suite: polled results are streamed into the store (vitest.config.ts runs it on the local and the S3 store).
import { describe, expect, it } from 'vitest';
import { parseDeployments } from '../../runtime/routing/deployments-file.js';
import { bodyD, createTask, MODEL_D } from '../http/helpers.js';
import { JobsProtocolServer } from '../../support/upstreams/jobs-protocol-server.js';
import { ReplicateServer } from '../../support/upstreams/replicate-server.js';
import { closedAfterEach } from './support.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';

/**
 * Issue 27, what a poll can answer that no one planned for, against loopback servers written from
 * each protocol (test/support): a status value the adapter does not know is a protocol failure of
 * that poll, asked again with a growing pause and never forever (the task ends at its deadline,
 * hold released, and its polls stop); a content-policy failure reported at poll time, after the
 * job ran, fails the task with the provider's reason (identifiers removed), never elsewhere.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('poll answers no profile foresaw (issue 27)', () => {
  const opened = closedAfterEach();

  const workOf = (t: TestService, taskId: string) =>
    t.service.ctx.db.kysely
      .selectFrom('work_items')
      .select(['kind', 'done_at', 'due_at'])
      .where('task_id', '=', taskId)
      .execute();

  it('a status value the adapter does not map, answered every time: polled again with backoff, the task expires at its deadline with its hold released, and its polls stop', async () => {
    const replicate = await new ReplicateServer({ latencyMs: 600_000, unknownStatus: 'paused' }).start();
    opened.servers.push(replicate);
    const plan = parseDeployments(
      'deployments.yaml',
      [
        'upstreams:',
        `  r8: { kind: replicate, baseUrl: "${replicate.baseUrl}" }`,
        'models:',
        `  ${MODEL_D}:`,
        '    - { upstream: r8, upstreamModel: vendor-d/family-d-r2v }',
      ].join('\n'),
    );
    const t = await startTestService({ upstreamPollMs: 50, taskDeadlineMs: 4000 }, { deploymentsPlan: plan });
    opened.service = t;
    const { accountId, apiKey } = await t.account(1000);
    const created = await createTask(t, apiKey, bodyD('an unknown state, Picture 1'));
    const taskId = created.body.data.taskId as string;
    const task = await waitForTerminal(t, apiKey, taskId, 15_000);
    expect(task).toMatchObject({ state: 'expired', errorCode: 'deadline_exceeded', credits: 0 });
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
    await t.checkLedger(accountId);
    // Each failed poll waits longer (2 s, 4 s, ...): within a 4 s deadline at most a few polls, not one per 50 ms.
    expect(replicate.polls).toBeGreaterThanOrEqual(1);
    expect(replicate.polls).toBeLessThanOrEqual(4);
    const poll = (await workOf(t, taskId)).find((w) => w.kind === 'poll');
    expect(poll?.done_at).not.toBeNull();
    const after = replicate.polls;
    await sleep(2500);
    expect(replicate.polls).toBe(after);
  });

  it('issue 37: a jobs-protocol state the protocol does not define (paused) is a failed poll, not a failed job: polled again with backoff until the task expires at its deadline, hold released', async () => {
    const upstream = await new JobsProtocolServer({ latencyMs: 0, endState: 'paused' }).start();
    opened.servers.push(upstream);
    const plan = parseDeployments(
      'deployments.yaml',
      [
        'upstreams:',
        `  up: { kind: jobs, baseUrl: "${upstream.baseUrl}" }`,
        'models:',
        `  ${MODEL_D}:`,
        '    - upstream: up',
      ].join('\n'),
    );
    const t = await startTestService({ upstreamPollMs: 50, taskDeadlineMs: 4000 }, { deploymentsPlan: plan });
    opened.service = t;
    const { accountId, apiKey } = await t.account(1000);
    const created = await createTask(t, apiKey, bodyD('a paused job, Picture 1'));
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    // Before: failed at the first poll with "The provider reported the task paused.".
    expect(task).toMatchObject({ state: 'expired', errorCode: 'deadline_exceeded', credits: 0 });
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
    await t.checkLedger(accountId);
    expect(upstream.polls).toBeGreaterThanOrEqual(1);
    expect(upstream.polls).toBeLessThanOrEqual(4);
  });

  it("a content-policy failure at poll time, after the job ran: the task fails with the provider's reason without its identifiers, hold released, never sent to the second deployment, not reconciled", async () => {
    const first = await new JobsProtocolServer({ latencyMs: 300, failWhenPromptContains: 'FLAG' }).start();
    const second = await new JobsProtocolServer({ latencyMs: 300 }).start();
    opened.servers.push(first, second);
    const plan = parseDeployments(
      'deployments.yaml',
      [
        'upstreams:',
        `  first: { kind: jobs, baseUrl: "${first.baseUrl}" }`,
        `  second: { kind: jobs, baseUrl: "${second.baseUrl}" }`,
        'models:',
        `  ${MODEL_D}:`,
        '    - { upstream: first, priority: 10 }',
        '    - { upstream: second, priority: 5 }',
      ].join('\n'),
    );
    const t = await startTestService({ upstreamPollMs: 50, upstreamReconcilePollMs: 50 }, { deploymentsPlan: plan });
    opened.service = t;
    const { accountId, apiKey } = await t.account(1000);
    const created = await createTask(t, apiKey, bodyD('a FLAG fox, Picture 1'));
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    const [jobId] = [...first.jobs.keys()];
    expect(task).toMatchObject({ state: 'failed', errorCode: 'generation_failed', credits: 0 });
    expect(task.errorMessage).toMatch(/^Content policy violation: the prompt was rejected/);
    expect(task.errorMessage).not.toContain(jobId);
    expect(task.errorMessage).not.toContain('acct_upstream12345');
    expect([first.submits.length, second.submits.length]).toEqual([1, 0]);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
    await t.checkLedger(accountId);
    // The job ended at the provider: nothing to cancel or reconcile.
    await sleep(300);
    const kinds = (await workOf(t, task.taskId)).map((w) => w.kind);
    expect(kinds).toContain('poll');
    expect(kinds.filter((k) => k === 'reconcile' || k === 'upstream-cancel')).toEqual([]);
    const row = await t.service.ctx.db.kysely
      .selectFrom('tasks')
      .select('upstream_final_state')
      .where('id', '=', task.taskId)
      .executeTakeFirstOrThrow();
    expect(row.upstream_final_state).toBeNull();
  });
});
