import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { parseDeployments } from '../../runtime/routing/deployments-file.js';
import { healthState } from '../../runtime/routing/health.js';
import { bodyD, createTask, MODEL_D } from '../http/helpers.js';
import { ROOT } from '../support/root.js';
import { JobsProtocolServer } from '../../support/upstreams/jobs-protocol-server.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';

const run = promisify(execFile);

/**
 * Upstream health from every call (issues 28 and 37): polls count toward a deployment's health as
 * submits do, once per task. A deployment whose polls fail is `degraded` (its last call failed); a
 * single tenant's failing tasks trip it (`cooldown.singleTenant`); a poll it answers ends the run of
 * failures, and its probe, repeated while it is tripped, recovers it. /readyz, /metrics and
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

  it("one tenant's polls failing trip it (status, /readyz, /metrics); the probe, repeated while it cools, brings it back to ok", async () => {
    const { failing, file } = await serve('{ failures: 2, seconds: 10, singleTenant: true, probeSeconds: 1 }');
    const { accountId, apiKey } = await t!.account(1000);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const created = await createTask(t!, apiKey, bodyD(`a heron ${i}, Picture 1`));
      expect(created.status).toBe(202);
      ids.push(created.body.data.taskId);
    }
    // Four running tasks, each poll failing: one tenant, so `failures` (2) of its tasks trip it for everyone.
    const cooling = await until('cooling', (d) => d.state === 'cooling');
    // (consecutiveFailures may be back to 0 already: a later task's submit, answered, ends the run of failed calls.)
    expect(cooling).toMatchObject({ lastFailureClass: 'server' });
    expect(cooling.coolingUntil).not.toBeNull();

    const { stdout } = await run(
      process.execPath,
      [join(ROOT, 'bin/mediaforge.js'), 'deployments', 'status', '--json'],
      { env: { ...process.env, MEDIAFORGE_DB: t!.config.dbUrl, MEDIAFORGE_DEPLOYMENTS: file } },
    );
    const status = JSON.parse(stdout).deployments.find((d: { name: string }) => d.name === 'relay');
    expect(['cooling', 'half-open']).toContain(status.state);
    expect(status.lastFailureClass).toBe('server');
    expect(status.lastFailure).toMatch(/^poll: /);

    failing.now = false;
    const tasks = await Promise.all(ids.map((id) => waitForTerminal(t!, apiKey, id, 30_000)));
    expect(tasks.map((x) => x.state)).toEqual(Array(4).fill('succeeded'));
    // Answered polls end the run of failures; the probe (every probeSeconds while tripped) recovers it for everyone.
    const ok = await until('ok', (d) => d.state === 'ok', 25_000);
    expect(ok).toMatchObject({ consecutiveFailures: 0, coolingUntil: null, lastProbe: { outcome: 'ok' } });
    expect((await t!.call('GET', '/metrics')).body).toContain('mediaforge_upstream_health{deployment="relay"} 0');
    await t!.checkLedger(accountId);
  }, 90_000); // the CLI is a process of its own: slow to start on a loaded machine
});

describe('health states (runtime/routing/health.ts healthState)', () => {
  const NOW = 1_000_000;
  type Given = { failures: number; coolingUntil: number | null; trippedAt?: number; trips?: number; full?: boolean };
  it.each<[string, { given: Given; want: string }]>([
    ['no failures: ok', { given: { failures: 0, coolingUntil: null }, want: 'ok' }],
    [
      'no failures, maxInFlight reached: full',
      { given: { failures: 0, coolingUntil: null, full: true }, want: 'full' },
    ],
    ['a failure, not tripped: degraded', { given: { failures: 1, coolingUntil: null }, want: 'degraded' }],
    [
      'many failures, not tripped (one owner): degraded',
      { given: { failures: 40, coolingUntil: null }, want: 'degraded' },
    ],
    ['failures and full: degraded first', { given: { failures: 2, coolingUntil: null, full: true }, want: 'degraded' }],
    [
      'tripped once, within its cool-down: cooling',
      { given: { failures: 5, coolingUntil: NOW + 30_000, trippedAt: NOW - 1, trips: 1 }, want: 'cooling' },
    ],
    [
      'answered during a cool-down: cooling until it ends',
      { given: { failures: 0, coolingUntil: NOW + 1, trippedAt: NOW - 1, trips: 1 }, want: 'cooling' },
    ],
    [
      'tripped twice in a row (or its probe failed): down',
      { given: { failures: 6, coolingUntil: NOW + 30_000, trippedAt: NOW - 1, trips: 2 }, want: 'down' },
    ],
    [
      'tripped, cool-down over, not recovered: half-open',
      { given: { failures: 6, coolingUntil: NOW - 1, trippedAt: NOW - 40_000, trips: 2 }, want: 'half-open' },
    ],
    ['recovered, failures on record: degraded', { given: { failures: 3, coolingUntil: NOW - 1 }, want: 'degraded' }],
  ])('%s', (_name, { given, want }) => {
    const row = {
      consecutive_failures: given.failures,
      cooldown_until: given.coolingUntil,
      tripped_at: given.trippedAt ?? null,
      trips: given.trips ?? 0,
    };
    expect(healthState(row, given.full ?? false, NOW)).toBe(want);
  });
});
