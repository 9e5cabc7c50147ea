// @store-suite: results after a failover are streamed into the store (vitest.config.ts runs it on the local and the S3 store).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseDeployments } from '../../runtime/routing/deployments-file.js';
import { bodyD, createTask, MODEL_D, PRICE_D } from '../http/helpers.js';
import {
  JobsProtocolServer,
  refusedUrl,
  type JobsServerOptions,
} from '../../support/upstreams/jobs-protocol-server.js';
import { deploymentOf } from './support.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';

/**
 * Failover (issue 17): a submit that cannot have created anything upstream (connection refused,
 * 429, 503) goes to the next deployment; a refusal of the request itself (400) fails the task
 * with the upstream's reason and goes nowhere else; a submit whose outcome is unknown (the body
 * was read, the connection reset) is never sent to a second deployment: without an idempotency
 * key (openai-videos) the task fails with its hold released, with one (jobs) the same deployment
 * is asked again with the same key and one job exists.
 */

/** A loopback server that reads each request's body and then destroys the connection, counting them. */
async function resettingServer(): Promise<{ url: string; requests: () => number; close(): Promise<void> }> {
  let requests = 0;
  const server: Server = createServer((request) => {
    request.resume();
    request.on('end', () => {
      requests++;
      request.socket.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests: () => requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

interface Case {
  /** The first deployment: its kind and where it is (a server the case starts). */
  first: { kind: 'jobs' | 'openai-videos'; server: 'refused' | 'unresolvable' | 'reset' | JobsServerOptions };
  want: {
    state: 'succeeded' | 'failed';
    errorCode?: string;
    errorMessage?: string;
    firstSubmits?: number;
    secondSubmits: number;
    sameKeyResubmitted?: boolean;
  };
}

const CASES: [string, Case][] = [
  [
    'connection refused -> the second deployment',
    { first: { kind: 'jobs', server: 'refused' }, want: { state: 'succeeded', secondSubmits: 1 } },
  ],
  [
    'a name that does not resolve -> the second deployment',
    { first: { kind: 'jobs', server: 'unresolvable' }, want: { state: 'succeeded', secondSubmits: 1 } },
  ],
  [
    '429 with Retry-After -> the second deployment',
    {
      first: { kind: 'jobs', server: { submit: () => ({ status: 429, retryAfter: '5', msg: 'Too many requests.' }) } },
      want: { state: 'succeeded', firstSubmits: 1, secondSubmits: 1 },
    },
  ],
  [
    '503 -> the second deployment',
    {
      first: {
        kind: 'jobs',
        server: { submit: () => ({ status: 503, msg: 'The service is temporarily unavailable.' }) },
      },
      want: { state: 'succeeded', firstSubmits: 1, secondSubmits: 1 },
    },
  ],
  [
    '400 -> fails with the upstream reason, no failover',
    {
      first: {
        kind: 'jobs',
        server: {
          submit: () => ({
            status: 400,
            msg: 'input.prompt is not allowed for account acct_8f2k3j9d2k (request req_93kd82kd9d).',
          }),
        },
      },
      want: {
        state: 'failed',
        errorCode: 'generation_failed',
        errorMessage: 'input.prompt is not allowed for account.',
        firstSubmits: 1,
        secondSubmits: 0,
      },
    },
  ],
  [
    'reset after the body, no idempotency key (openai-videos) -> fails, sent once',
    {
      first: { kind: 'openai-videos', server: 'reset' },
      want: { state: 'failed', errorCode: 'internal_error', firstSubmits: 1, secondSubmits: 0 },
    },
  ],
  [
    'reset after the body, idempotency key (jobs) -> the same deployment again with the same key, one job',
    {
      first: { kind: 'jobs', server: { submit: (i) => (i === 0 ? 'reset' : undefined) } },
      want: { state: 'succeeded', firstSubmits: 2, secondSubmits: 0, sameKeyResubmitted: true },
    },
  ],
];

describe('failover between deployments', () => {
  let second: JobsProtocolServer;
  const opened: { close(): Promise<void> }[] = [];
  let t: TestService | undefined;

  beforeAll(async () => {
    second = await new JobsProtocolServer({ latencyMs: 100, apiKey: 'second-key' }).start();
  });
  afterAll(() => second.close());
  afterEach(async () => {
    await t?.close();
    t = undefined;
    for (const server of opened.splice(0)) await server.close();
    second.submits.length = 0;
  });

  it.each(CASES)('%s', async (_name, { first, want }) => {
    let firstSubmits = () => 0;
    let firstKeys = (): (string | undefined)[] => [];
    let firstUrl: string;
    if (first.server === 'refused') firstUrl = await refusedUrl();
    else if (first.server === 'unresolvable') firstUrl = 'http://upstream.mediaforge-test.invalid/api/v1';
    else if (first.server === 'reset') {
      const server = await resettingServer();
      opened.push(server);
      firstUrl = server.url;
      firstSubmits = server.requests;
    } else {
      const server = await new JobsProtocolServer({ latencyMs: 100, ...first.server }).start();
      opened.push(server);
      firstUrl = server.baseUrl;
      firstSubmits = () => server.submits.length;
      firstKeys = () => server.submits.map((s) => s.idempotencyKey);
    }
    const plan = parseDeployments(
      'deployments.yaml',
      [
        'upstreams:',
        `  first: { kind: ${first.kind}, baseUrl: "${firstUrl}" }`,
        `  second: { kind: jobs, baseUrl: "${second.baseUrl}", secretEnv: SECOND_KEY }`,
        'models:',
        `  ${MODEL_D}:`,
        '    - { upstream: first, priority: 10 }',
        '    - { upstream: second, priority: 5 }',
      ].join('\n'),
      { SECOND_KEY: 'second-key' },
    );
    t = await startTestService({ upstreamPollMs: 50 }, { deploymentsPlan: plan });
    const { accountId, apiKey } = await t.account(100);
    const created = await createTask(t, apiKey, bodyD('a fox in the snow, Picture 1'));
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);

    expect(task.state).toBe(want.state);
    if (want.errorCode) expect(task.errorCode).toBe(want.errorCode);
    if (want.errorMessage) expect(task.errorMessage).toBe(want.errorMessage);
    expect(second.submits.length).toBe(want.secondSubmits);
    if (want.firstSubmits !== undefined) expect(firstSubmits()).toBe(want.firstSubmits);
    if (want.sameKeyResubmitted) {
      const keys = firstKeys();
      expect(new Set(keys).size).toBe(1);
      expect(keys[0]).toMatch(/^mf-/);
    }
    // Charged for a success (the edge's own price), nothing held after a failure.
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: want.state === 'succeeded' ? PRICE_D : 0 });
    await t.checkLedger(accountId);
    const row = await deploymentOf(t, task.taskId);
    if (want.state === 'succeeded') expect(row.deployment).toBe(want.secondSubmits ? 'second' : 'first');
  });

  it('an owner whose tasks failed N submits cools down on the deployment alone, shown, and is not sent there until it is over', async () => {
    const failing = await new JobsProtocolServer({ submit: () => ({ status: 503 }) }).start();
    opened.push(failing);
    const plan = parseDeployments(
      'deployments.yaml',
      [
        'upstreams:',
        `  flaky: { kind: jobs, baseUrl: "${failing.baseUrl}" }`,
        `  steady: { kind: jobs, baseUrl: "${second.baseUrl}", secretEnv: SECOND_KEY }`,
        'models:',
        `  ${MODEL_D}:`,
        '    - { upstream: flaky, priority: 10 }',
        '    - { upstream: steady, priority: 5 }',
        'cooldown: { failures: 2, seconds: 60 }',
      ].join('\n'),
      { SECOND_KEY: 'second-key' },
    );
    t = await startTestService({ upstreamPollMs: 50 }, { deploymentsPlan: plan });
    const { apiKey } = await t.account(1000);
    for (let i = 0; i < 3; i++) {
      const created = await createTask(t, apiKey, bodyD(`fox ${i}, Picture 1`));
      expect((await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000)).state).toBe('succeeded');
    }
    // Two of its tasks failed there: the owner cools on it (not everyone: one owner is no evidence
    // of an outage), so its third task went straight to the next tier.
    expect(failing.submits.length).toBe(2);
    expect(second.submits.length).toBe(3);
    const ready = await t.call('GET', '/readyz');
    expect(ready.status).toBe(200);
    const flaky = ready.body.deployments.find((d: { name: string }) => d.name === 'flaky');
    expect(flaky).toMatchObject({
      kind: 'jobs',
      state: 'degraded',
      consecutiveFailures: 2,
      coolingOwners: 1,
      coolingUntil: null,
      inFlight: 0,
    });
    expect(flaky.lastFailure).toMatch(/503/);
    expect(ready.body.deployments.find((d: { name: string }) => d.name === 'steady')).toMatchObject({
      state: 'ok',
      consecutiveFailures: 0,
    });
    const metrics = await t.call('GET', '/metrics');
    expect(metrics.body).toContain('mediaforge_upstream_cooling{deployment="flaky"} 0');
    expect(metrics.body).toContain('mediaforge_upstream_failures{deployment="flaky",class="server"} 2');
    expect(metrics.body).toContain('mediaforge_upstream_submits{deployment="steady"} 3');
    // Three tasks one after another, each through a failover: a loaded machine needs more than the default 30 s.
  }, 90_000);
});
