import { describe, expect, it } from 'vitest';
import { parseDeployments } from '../../runtime/routing/deployments-file.js';
import { bodyD, createTask, MODEL_D } from '../http/helpers.js';
import { JobsProtocolServer } from '../../support/upstreams/jobs-protocol-server.js';
import { closedAfterEach } from './support.js';
import { startTestService, waitForTerminal } from '../support/service.js';

/**
 * Routing (issue 17): the highest priority tier with capacity takes the task; within a tier,
 * routes share traffic by weight; each upstream gets the model under its own name.
 */
describe('routing between deployments', () => {
  const opened = closedAfterEach();

  async function serve(upstreams: { name: string; latencyMs: number; extra?: string; route: string }[]) {
    const started = await Promise.all(
      upstreams.map(async (u) => ({ ...u, server: await new JobsProtocolServer({ latencyMs: u.latencyMs }).start() })),
    );
    opened.servers.push(...started.map((u) => u.server));
    const plan = parseDeployments(
      'deployments.yaml',
      [
        'upstreams:',
        ...started.map((u) => `  ${u.name}: { kind: jobs, baseUrl: "${u.server.baseUrl}"${u.extra ?? ''} }`),
        'models:',
        `  ${MODEL_D}:`,
        ...started.map((u) => `    - { upstream: ${u.name}, ${u.route} }`),
      ].join('\n'),
    );
    const t = await startTestService({ upstreamPollMs: 50 }, { deploymentsPlan: plan });
    opened.service = t;
    const account = await t.account(10_000);
    /** Creates `n` tasks together and waits for each to end (for up to `waitMs`). */
    const run = async (n: number, waitMs = 30_000) => {
      const ids = await Promise.all(
        Array.from(
          { length: n },
          async (_, i) =>
            (await createTask(t!, account.apiKey, bodyD(`routed ${i}, Picture 1`))).body.data.taskId as string,
        ),
      );
      return Promise.all(ids.map((id) => waitForTerminal(t!, account.apiKey, id, waitMs)));
    };
    return { servers: Object.fromEntries(started.map((u) => [u.name, u.server])), run };
  }

  it('the highest tier takes tasks while it has capacity; the next tier takes the rest', async () => {
    const { servers: by, run } = await serve([
      {
        name: 'primary',
        latencyMs: 1500,
        extra: ', maxInFlight: 1',
        route: 'priority: 10, upstreamModel: family-d-at-primary',
      },
      { name: 'secondary', latencyMs: 100, route: 'priority: 1' },
    ]);
    const tasks = await run(4);
    expect(tasks.map((x) => x.state)).toEqual(Array(4).fill('succeeded'));
    // Submitted together: the primary's one slot went to one task, the other three did not wait for it.
    expect([by.primary.jobs.size, by.secondary.jobs.size]).toEqual([1, 3]);
    // Each upstream is sent the model under its own name: the route's upstreamModel, else the catalogue id.
    expect(by.primary.submits.map((s) => s.body.model)).toEqual(['family-d-at-primary']);
    expect(new Set(by.secondary.submits.map((s) => s.body.model))).toEqual(new Set([MODEL_D]));
  });

  it('routes of one tier share the traffic by weight', async () => {
    const { servers: by, run } = await serve([
      { name: 'heavy', latencyMs: 50, route: 'priority: 5, weight: 3' },
      { name: 'light', latencyMs: 50, route: 'priority: 5, weight: 1' },
    ]);
    // Forty tasks for the statistics below: 4 s on a quiet machine, over 30 s once on a loaded one (CI, four forks on two cores).
    const tasks = await run(40, 100_000);
    expect(tasks.every((x) => x.state === 'succeeded')).toBe(true);
    expect(by.heavy.jobs.size + by.light.jobs.size).toBe(40);
    // Expected 30 and 10; the light one reaching 20 of 40 at a 1-in-4 share has a chance of about 1 in 10,000.
    expect(by.light.jobs.size).toBeGreaterThan(0);
    expect(by.heavy.jobs.size).toBeGreaterThan(by.light.jobs.size);
  }, 120_000);
});
