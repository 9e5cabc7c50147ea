import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { parseDeployments } from '../../runtime/routing/deployments-file.js';
import { healthState } from '../../runtime/routing/health.js';
import { bodyD, createTask, MODEL_D } from '../http/helpers.js';
import { ROOT } from '../support/catalogue.js';
import { JobsProtocolServer } from '../../support/upstreams/jobs-protocol-server.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';

const run = promisify(execFile);

/**
 * Upstream health from every call (issue 28): polls count toward a deployment's health as submits
 * do. A deployment whose polls fail is `degraded` (its last call failed), then, after
 * `cooldown.failures` in a row, cooling, then, after twice that, `down`; a poll it answers ends the
 * run of failures, and it is `ok` again once the cool-down has run out. /readyz, /metrics and
 * `mediaforge deployments status` show it.
 */
describe('poll failures count toward health', () => {
  let t: TestService | undefined;
  let upstream: JobsProtocolServer | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await t?.close();
    await upstream?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    t = upstream = dir = undefined;
  });

  /** A sole jobs upstream whose polls answer 503 while `failing.now` is true; the deployments file as text. */
  async function serve(cooldown: string) {
    const failing = { now: true };
    upstream = await new JobsProtocolServer({
      latencyMs: 100,
      pollAnswer: () => (failing.now ? { status: 503, msg: 'The service is temporarily unavailable.' } : undefined),
    }).start();
    const text = [
      'upstreams:',
      `  relay: { kind: jobs, baseUrl: "${upstream.baseUrl}" }`,
      'models:',
      `  ${MODEL_D}:`,
      '    - { upstream: relay }',
      `cooldown: ${cooldown}`,
    ].join('\n');
    t = await startTestService({ upstreamPollMs: 50 }, { deploymentsPlan: parseDeployments('deployments.yaml', text) });
    dir = mkdtempSync(join(tmpdir(), 'mediaforge-poll-health-'));
    writeFileSync(join(dir, 'deployments.yaml'), text);
    return { failing, file: join(dir, 'deployments.yaml') };
  }

  /** The relay's state in /readyz (loopback: the detailed answer). */
  async function relay(): Promise<Record<string, any>> {
    const ready = await t!.call('GET', '/readyz');
    expect(ready.status).toBe(200);
    return ready.body.deployments.find((d: { name: string }) => d.name === 'relay');
  }

  async function until(what: string, check: (d: Record<string, any>) => boolean, timeoutMs = 15_000) {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const d = await relay();
      if (check(d)) return d;
      if (Date.now() > end) throw new Error(`${what} not seen in ${timeoutMs} ms: ${JSON.stringify(d)}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  it('a failed poll makes the deployment degraded; the next poll it answers makes it ok; the task succeeds', async () => {
    const { failing } = await serve('{ failures: 3, seconds: 1 }');
    const { accountId, apiKey } = await t!.account(100);
    const created = await createTask(t!, apiKey, bodyD('a heron at dawn, Picture 1'));
    expect(created.status).toBe(202);

    const degraded = await until('degraded', (d) => d.state === 'degraded');
    expect(degraded).toMatchObject({ consecutiveFailures: 1, lastFailureClass: 'server', coolingUntil: null });
    expect(degraded.lastFailure).toMatch(/^poll: recordInfo: status 503/);

    failing.now = false;
    const task = await waitForTerminal(t!, apiKey, created.body.data.taskId, 20_000);
    expect(task.state).toBe('succeeded');
    // Answered: the run of failures is over; the last failure stays on record for the operator.
    expect(await relay()).toMatchObject({ state: 'ok', consecutiveFailures: 0, lastFailureClass: 'server' });
    await t!.checkLedger(accountId);
  });

  it('polls failing in a row turn it down (status, /readyz, /metrics); answered polls bring it back to ok', async () => {
    const { failing, file } = await serve('{ failures: 2, seconds: 1 }');
    const { accountId, apiKey } = await t!.account(1000);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const created = await createTask(t!, apiKey, bodyD(`a heron ${i}, Picture 1`));
      expect(created.status).toBe(202);
      ids.push(created.body.data.taskId);
    }
    // Four running tasks, each poll failing: 4 failures in a row is twice cooldown.failures.
    const down = await until('down', (d) => d.state === 'down');
    expect(down.consecutiveFailures).toBeGreaterThanOrEqual(4);
    expect(down.coolingUntil).not.toBeNull();

    const { stdout } = await run(
      process.execPath,
      [join(ROOT, 'bin/mediaforge.js'), 'deployments', 'status', '--json'],
      { env: { ...process.env, MEDIAFORGE_DB: t!.config.dbUrl, MEDIAFORGE_DEPLOYMENTS: file } },
    );
    const status = JSON.parse(stdout).deployments.find((d: { name: string }) => d.name === 'relay');
    expect(status).toMatchObject({ state: 'down', lastFailureClass: 'server' });
    expect(status.lastFailure).toMatch(/^poll: /);
    const metrics = await t!.call('GET', '/metrics');
    expect(metrics.body).toContain('mediaforge_upstream_health{deployment="relay"} 3');

    failing.now = false;
    const tasks = await Promise.all(ids.map((id) => waitForTerminal(t!, apiKey, id, 30_000)));
    expect(tasks.map((x) => x.state)).toEqual(Array(4).fill('succeeded'));
    // The answered polls ended the run; the cool-down of the last failure runs out within its second.
    const ok = await until('ok', (d) => d.state === 'ok', 5000);
    expect(ok).toMatchObject({ consecutiveFailures: 0, coolingUntil: null });
    expect((await t!.call('GET', '/metrics')).body).toContain('mediaforge_upstream_health{deployment="relay"} 0');
    await t!.checkLedger(accountId);
  }, 90_000); // the CLI is a process of its own: slow to start on a loaded machine
});

describe('health states by consecutive failed calls (cooldown.failures 3)', () => {
  const NOW = 1_000_000;
  const COOLDOWN = { failures: 3, ms: 30_000 };
  it.each<[string, { given: { failures: number; coolingUntil: number | null; full?: boolean }; want: string }]>([
    ['no failures: ok', { given: { failures: 0, coolingUntil: null }, want: 'ok' }],
    [
      'no failures, maxInFlight reached: full',
      { given: { failures: 0, coolingUntil: null, full: true }, want: 'full' },
    ],
    ['one failure: degraded', { given: { failures: 1, coolingUntil: null }, want: 'degraded' }],
    [
      'two failures and full: degraded first',
      { given: { failures: 2, coolingUntil: null, full: true }, want: 'degraded' },
    ],
    ['three failures: cooling', { given: { failures: 3, coolingUntil: NOW + 30_000 }, want: 'cooling' }],
    [
      'answered during a cool-down: cooling until it ends',
      { given: { failures: 0, coolingUntil: NOW + 1 }, want: 'cooling' },
    ],
    ['five failures: cooling', { given: { failures: 5, coolingUntil: NOW + 30_000 }, want: 'cooling' }],
    ['six failures: down', { given: { failures: 6, coolingUntil: NOW + 30_000 }, want: 'down' }],
    [
      'down after its cool-down ended: still down until a call is answered',
      { given: { failures: 6, coolingUntil: NOW - 1 }, want: 'down' },
    ],
    ['three failures, cool-down over: degraded', { given: { failures: 3, coolingUntil: NOW - 1 }, want: 'degraded' }],
  ])('%s', (_name, { given, want }) => {
    const row = { consecutive_failures: given.failures, cooldown_until: given.coolingUntil };
    expect(healthState(row, COOLDOWN, given.full ?? false, NOW)).toBe(want);
  });
});
