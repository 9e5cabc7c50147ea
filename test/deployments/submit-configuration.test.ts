import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { bodyD, MODEL_D } from '../http/helpers.js';
import { ROOT } from '../support/root.js';
import { JobsProtocolServer } from '../../support/upstreams/jobs-protocol-server.js';
import { call, startMediaforge, waitForTask, type MediaforgeProcess } from './support.js';
import { eventually } from '../support/eventually.js';

const run = promisify(execFile);
const OPERATOR_KEY = 'sk-operator-misconfigured-0123456789abcdef';

/**
 * A loopback server that answers the probe's GET (the protocol's listing: 200, an empty list) and
 * `status` to everything else: a path that serves reads but not the submit, so the start-up probe
 * passes and only a submit finds the misconfiguration (a baseUrl the probe rejects is `down` at
 * start instead: test/deployments/health-evidence.test.ts).
 */
async function submitRefusingServer(status: 404 | 405, root: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    request.resume();
    if (request.method === 'GET') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ code: 200, msg: 'success', data: { tasks: [], nextCursor: null }, object: 'list' }),
      );
      return;
    }
    response.writeHead(status, { ...(status === 405 ? { allow: 'GET' } : {}), 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: { message: status === 405 ? 'Method Not Allowed' : 'Not Found' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${root}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

interface Case {
  /** The misconfigured deployment: its kind, and where it points (a server the case starts). */
  kind: 'jobs' | 'openai-videos';
  server: 'jobs-without-api-v1' | 'method-not-allowed';
  want: { status: number; path: string };
}

/**
 * A 404 or 405 answered to a submit (issue 28) is the operator's configuration (a baseUrl without
 * its `/api/v1`, another protocol's path), not the caller's request: the task fails over to the
 * next deployment and succeeds; the failure counts against the deployment as the `configuration`
 * class, shown with its reason by /readyz and `mediaforge deployments status`; one warn line names
 * the deployment and the URL path, never the operator's key.
 */
describe('a 404 or 405 to a submit: configuration, fail over', () => {
  const closers: { close(): Promise<void> }[] = [];
  let proc: MediaforgeProcess | undefined;
  afterEach(async () => {
    await proc?.stop();
    proc = undefined;
    for (const c of closers.splice(0)) await c.close();
  });

  it.each<[string, Case]>([
    [
      'a jobs upstream whose baseUrl lacks /api/v1 (404)',
      { kind: 'jobs', server: 'jobs-without-api-v1', want: { status: 404, path: '/jobs/createTask' } },
    ],
    [
      'an openai-videos upstream pointed at a server that refuses the method (405)',
      { kind: 'openai-videos', server: 'method-not-allowed', want: { status: 405, path: '/api/v1/videos' } },
    ],
  ])(
    '%s',
    async (_name, { kind, server, want }) => {
      const good = await new JobsProtocolServer({ latencyMs: 100 }).start();
      closers.push(good);
      // Without /api/v1 (the protocol lives under it): 404 to the submit; another protocol's server: 405.
      const refusing =
        server === 'jobs-without-api-v1'
          ? await submitRefusingServer(404, '')
          : await submitRefusingServer(405, '/api/v1');
      closers.push(refusing);
      const wrongUrl = refusing.url;
      const deployments = [
        'upstreams:',
        `  misconfigured: { kind: ${kind}, baseUrl: "${wrongUrl}", secretEnv: MISCONFIGURED_KEY }`,
        `  good: { kind: jobs, baseUrl: "${good.baseUrl}" }`,
        'models:',
        `  ${MODEL_D}:`,
        '    - { upstream: misconfigured, priority: 10 }',
        '    - { upstream: good, priority: 5 }',
      ].join('\n');
      proc = await startMediaforge(
        'configuration',
        {
          MEDIAFORGE_DEPLOYMENTS: '$DIR/deployments.yaml',
          MISCONFIGURED_KEY: OPERATOR_KEY,
          MEDIAFORGE_UPSTREAM_POLL_MS: '100',
        },
        { 'deployments.yaml': deployments },
      );
      const { apiKey } = await proc.account(1000);
      const created = await call(proc.url, 'POST', '/api/v1/jobs/createTask', apiKey, bodyD('a fox, Picture 1'));
      expect(created.status, JSON.stringify(created.body)).toBe(202);
      const task = await waitForTask(proc.url, apiKey, created.body.data.taskId);
      expect(task.state).toBe('succeeded');
      expect(good.submits.length).toBe(1);

      // Counted against the deployment, its class and reason shown.
      const ready = await call(proc.url, 'GET', '/readyz', apiKey);
      const shown = ready.body.deployments.find((d: { name: string }) => d.name === 'misconfigured');
      // A 404 or 405 no customer's request can cause: the probe is asked at once (it answers here: the
      // path serves reads), so the deployment stays degraded, shown with the submit's class and reason.
      expect(shown).toMatchObject({ state: 'degraded', consecutiveFailures: 1, lastFailureClass: 'configuration' });
      expect(shown.lastFailure).toContain(`status ${want.status} at ${want.path}`);
      // The counts by class are added to the shared totals every two seconds (routing/upstream-stats.ts):
      // read the status until they are in, for at most 20 s.
      let stdout = '';
      const cliEnv = { ...process.env, ...proc.env };
      const readStatus = async () => {
        ({ stdout } = await run(
          process.execPath,
          [join(ROOT, 'bin/mediaforge.js'), 'deployments', 'status', '--json'],
          { env: cliEnv },
        ));
        return JSON.parse(stdout).deployments.find((d: { name: string }) => d.name === 'misconfigured');
      };
      const status = await eventually(
        async () => {
          const read = await readStatus();
          return read.failures.configuration > 0 && read;
        },
        'the failure counts in deployments status',
        20_000,
      );
      expect(status).toMatchObject({ lastFailureClass: 'configuration', failures: { configuration: 1 } });
      expect(status.lastFailure).toContain(want.path);

      // One warn line with the deployment and the path; the operator's key nowhere in the log.
      const lines = proc.server
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const warned = lines.filter((l) => l.deployment === 'misconfigured' && l.path === want.path);
      expect(warned).toHaveLength(1);
      expect(warned[0]).toMatchObject({ level: 40, status: want.status });
      expect(String(warned[0].msg)).toContain(`misconfigured answered ${want.status} to a submit at ${want.path}`);
      expect(proc.server.output()).not.toContain(OPERATOR_KEY);
      expect(stdout).not.toContain(OPERATOR_KEY);
    },
    120_000, // a serve process and a CLI process of their own
  );
});
