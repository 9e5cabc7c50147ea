// @store-suite: every adapter's result is streamed into the store (vitest.config.ts runs it on the local and the S3 store).
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDeployments } from '../../runtime/routing/deployments-file.js';
import type { Db } from '../../runtime/storage/dialect.js';
import { createTask } from '../http/helpers.js';
import { ROOT } from '../support/root.js';
import { eventually } from '../support/eventually.js';
import { startTestService, type TestService, testStoreEnvironment, workItemOf } from '../support/service.js';
import {
  type BehaviourAdapter,
  carries,
  type Faults,
  type JobClock,
  type Loopback,
  type Scenario,
  type SubmitFault,
} from './behaviour/adapter.js';
import { ADAPTERS as ADAPTERS_BY_KIND } from './behaviour/adapters.js';
import { crash, type MediaforgeProcess, startMediaforge, waitForTask } from './support.js';

/**
 * One behaviour suite over every adapter: the four coded protocols and every provider profile
 * under spec/providers/ (a profile added later is found here, and fails until its row in
 * ./behaviour/adapters.ts says how to run its loopback server). Each scenario goes through the
 * public surface (HTTP to a real service, loopback protocol servers from support/upstreams/).
 *
 * One service per run (its engine is the project's) serves every adapter: one deployments file
 * declares, per adapter, a model of its own routed to `<kind>-first` above `<kind>-second`, each
 * its own loopback server. Scenarios share that service and those servers and stay independent by
 * their own accounts (an owner's failures cool a deployment for that owner alone) and by a marker
 * in their prompt, which the servers read to answer as the scenario needs (a refused submit, a job
 * that stays queued, a link that has expired). What needs a process to kill (SIGKILL mid-poll) or
 * a clean margin report (reconciliation) runs on one `mediaforge serve` per adapter.
 */
const run = promisify(execFile);

// The coded protocols: runtime/upstreams/<kind>.ts, each with its loopback server in support/upstreams/.
const CODED = ['openai-videos', 'jobs', 'fal-queue', 'replicate'];
const PROFILES = readdirSync(join(ROOT, 'spec/providers'))
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => f.slice(0, -'.yaml'.length))
  .filter(
    (name) =>
      !CODED.includes(name) && /^submit:/m.test(readFileSync(join(ROOT, 'spec/providers', `${name}.yaml`), 'utf8')),
  );
const KINDS = [...CODED, ...PROFILES];

/** Each kind's adapter (its row in ./behaviour/adapters.ts), or that it has none. */
const LOADED = KINDS.map((kind) => {
  const row = Object.hasOwn(ADAPTERS_BY_KIND, kind) ? ADAPTERS_BY_KIND[kind] : undefined;
  return row ? { kind, adapter: { kind, ...row } } : { kind, missing: `no row for ${kind} in behaviour/adapters.ts` };
});
const ADAPTERS = LOADED.flatMap((l) => (l.adapter ? [l.adapter] : []));

/** The service's task deadline: long enough for a quick job under load, short enough to wait for. */
const DEADLINE_MS = 8_000;
const KEY = 'operator-key-of-the-behaviour-suite';

/** A scenario's marker in the prompt; none is a substring of another. */
const marker = (name: string) => `~${name.replaceAll(' ', '-')}~`;
const M = {
  success: marker('success'),
  failure: marker('failure'),
  busy: marker('busy'),
  unauthorized: marker('unauthorized'),
  refused: marker('refused'),
  retryAfter: marker('retry-after'),
  queued: marker('stays-queued'),
  running: marker('runs-on'),
  providerCancel: marker('provider-cancel'),
  expiredLink: marker('expired-link'),
  sigkill: marker('sigkill'),
  reconcile: marker('reconcile'),
};

/** The clock of a job by its marker: quick unless the scenario needs it otherwise. */
function clockFor(body: unknown): JobClock | undefined {
  if (carries(body, M.success)) return { latencyMs: 1_500, queuedMs: 500 };
  if (carries(body, M.queued) || carries(body, M.providerCancel)) return { latencyMs: 600_000, queuedMs: 600_000 };
  if (carries(body, M.running)) return { latencyMs: 600_000, queuedMs: 0 };
  if (carries(body, M.expiredLink)) return { latencyMs: 300, queuedMs: 50, resultLifetimeMs: 0, outputLifetimeMs: 0 };
  if (carries(body, M.sigkill)) return { latencyMs: 4_000, queuedMs: 300 };
  // Past the restarted serve process's 3 s deadline, running all the while (a cancel cannot stop it).
  if (carries(body, M.reconcile)) return { latencyMs: 6_000, queuedMs: 0 };
  return { latencyMs: 300, queuedMs: 50 };
}

/** The first deployment answers every fault; the second only the one that must reach every deployment. */
const FIRST: Faults = {
  key: KEY,
  failMarker: M.failure,
  clockFor,
  submitFault(body): SubmitFault | undefined {
    if (carries(body, M.busy)) return 'busy';
    if (carries(body, M.unauthorized)) return 'unauthorized';
    if (carries(body, M.refused)) return 'refused';
    if (carries(body, M.retryAfter)) return 'busy-retry-after';
    return undefined;
  },
};
const SECOND: Faults = {
  ...FIRST,
  submitFault: (body) => (carries(body, M.retryAfter) ? 'busy-retry-after' : undefined),
};

const secretOf = (adapter: BehaviourAdapter) => adapter.secret?.(KEY) ?? KEY;
const envName = (kind: string, which: string) => `${kind.toUpperCase().replaceAll('-', '_')}_${which}_KEY`;

interface Served {
  adapter: BehaviourAdapter;
  first: Loopback;
  second: Loopback;
}

const served = new Map<string, Served>();
let t: TestService;

const count = (bodies: unknown[], mark: string) => bodies.filter((b) => carries(b, mark)).length;
const jobOf = (server: Loopback, mark: string) => server.jobs().find((j) => carries(j.body, mark));

/** The public states a task shows, in order, until it ends. */
async function follow(apiKey: string, taskId: string, timeoutMs = 20_000): Promise<{ states: string[]; task: any }> {
  const states: string[] = [];
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await t.call('GET', `/api/v1/jobs/recordInfo?taskId=${encodeURIComponent(taskId)}`, { key: apiKey });
    const state = r.body?.data?.state as string | undefined;
    if (state && states.at(-1) !== state) states.push(state);
    if (state && ['succeeded', 'failed', 'expired', 'canceled'].includes(state)) return { states, task: r.body.data };
    if (Date.now() > until) throw new Error(`task ${taskId} not terminal after ${timeoutMs} ms: ${states.join(' > ')}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A task of the adapter's model with this marker, on a fresh account; what the scenario reads. */
async function start(s: Served, mark: string) {
  const { accountId, apiKey } = await t.account(1000);
  const created = await createTask(t, apiKey, {
    model: s.adapter.model,
    input: { prompt: `a lighthouse ${mark}`, ...s.adapter.input },
  });
  expect(created.status).toBe(202);
  return { accountId, apiKey, taskId: created.body.data.taskId as string };
}

async function settledUncharged(accountId: string) {
  expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
  await t.checkLedger(accountId);
}

type Body = (s: Served) => Promise<void>;

/** Every scenario, run on the shared service unless it needs its own process (SIGKILL, reconciliation). */
const SCENARIOS: [Scenario, Body][] = [
  [
    'success',
    async (s) => {
      const { accountId, apiKey, taskId } = await start(s, M.success);
      const { states, task } = await follow(apiKey, taskId);
      expect([states.slice(-2), task.errorMessage]).toEqual([['running', 'succeeded'], undefined]);
      expect([count(s.first.submits(), M.success), count(s.second.submits(), M.success)]).toEqual([1, 0]);
      const media = await fetch(task.output.assets[0].url);
      expect([media.status, media.headers.get('content-type')]).toEqual([200, 'video/mp4']);
      expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: task.credits });
      await t.checkLedger(accountId);
    },
  ],
  [
    'failure',
    async (s) => {
      const { accountId, apiKey, taskId } = await start(s, M.failure);
      const { task } = await follow(apiKey, taskId);
      expect(task).toMatchObject({ state: 'failed', errorCode: 'generation_failed', credits: 0 });
      expect(task.errorMessage).toContain(s.adapter.failReason);
      const job = jobOf(s.first, M.failure)!;
      expect(task.errorMessage).not.toContain(job.id);
      expect([count(s.first.submits(), M.failure), count(s.second.submits(), M.failure)]).toEqual([1, 0]);
      await settledUncharged(accountId);
    },
  ],
  ...(
    [
      ['busy failover', M.busy],
      ['unauthorized failover', M.unauthorized],
    ] as const
  ).map(([name, mark]): [Scenario, Body] => [
    name,
    async (s) => {
      const { accountId, apiKey, taskId } = await start(s, mark);
      const { task } = await follow(apiKey, taskId);
      expect(task.state).toBe('succeeded');
      expect([count(s.first.submits(), mark), count(s.second.submits(), mark)]).toEqual([1, 1]);
      expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: task.credits });
      await t.checkLedger(accountId);
    },
  ]),
  [
    'refusal',
    async (s) => {
      const { accountId, apiKey, taskId } = await start(s, M.refused);
      const { task } = await follow(apiKey, taskId);
      expect(task).toMatchObject({ state: 'failed', errorCode: 'generation_failed', credits: 0 });
      expect(task.errorMessage).toContain(s.adapter.refusalReason);
      expect([count(s.first.submits(), M.refused), count(s.second.submits(), M.refused)]).toEqual([1, 0]);
      await settledUncharged(accountId);
    },
  ],
  [
    'retry-after',
    async (s) => {
      const { apiKey, taskId } = await start(s, M.retryAfter);
      // Both deployments answer 429 with Retry-After: 20 s; without it the next round would come within a second or two.
      await eventually(
        async () => {
          const item = await workItemOf(t, taskId, 'run');
          return count(s.second.submits(), M.retryAfter) === 1 && item?.lease_owner === null && item.attempts > 0;
        },
        'the busy answers of both deployments recorded',
        10_000,
      );
      const item = (await workItemOf(t, taskId, 'run'))!;
      expect(item.due_at).toBeGreaterThan(Date.now() + 10_000);
      const record = await t.call('GET', `/api/v1/jobs/recordInfo?taskId=${taskId}`, { key: apiKey });
      expect(record.body.data.state).toBe('queued');
      expect([count(s.first.submits(), M.retryAfter), count(s.second.submits(), M.retryAfter)]).toEqual([1, 1]);
    },
  ],
  [
    'deadline with a cancel',
    async (s) => {
      const { accountId, apiKey, taskId } = await start(s, M.queued);
      const { task } = await follow(apiKey, taskId);
      expect(task).toMatchObject({ state: 'expired', errorCode: 'deadline_exceeded', credits: 0 });
      const job = jobOf(s.first, M.queued)!;
      await eventually(() => s.first.cancels().includes(job.id), 'the cancel of the queued job', 5_000);
      expect(s.first.refusedCancels()).not.toContain(job.id);
      await settledUncharged(accountId);
    },
  ],
  [
    'deadline without a cancel',
    async (s) => {
      const { accountId, apiKey, taskId } = await start(s, M.running);
      const { task } = await follow(apiKey, taskId);
      expect(task).toMatchObject({ state: 'expired', errorCode: 'deadline_exceeded', credits: 0 });
      const job = jobOf(s.first, M.running)!;
      if (s.adapter.cancel === 'queued only')
        await eventually(
          () => s.first.refusedCancels().includes(job.id),
          'the refused cancel of the running job',
          5_000,
        );
      // Stopped by nothing: the job runs on at the provider.
      expect(s.first.cancels()).not.toContain(job.id);
      expect(job.canceledAt).toBeUndefined();
      await settledUncharged(accountId);
    },
  ],
  [
    'provider cancel',
    async (s) => {
      const { accountId, apiKey, taskId } = await start(s, M.providerCancel);
      await eventually(async () => {
        const r = await t.call('GET', `/api/v1/jobs/recordInfo?taskId=${taskId}`, { key: apiKey });
        return r.body.data.state === 'running' && jobOf(s.first, M.providerCancel) !== undefined;
      }, 'the job submitted and the task running');
      // Cancelled on the provider's side (its console, another client), not by the service.
      jobOf(s.first, M.providerCancel)!.canceledAt = Date.now();
      const { task } = await follow(apiKey, taskId);
      expect(task).toMatchObject({
        state: 'failed',
        errorCode: 'generation_failed',
        errorMessage: 'The provider canceled the generation.',
        credits: 0,
      });
      expect([count(s.first.submits(), M.providerCancel), count(s.second.submits(), M.providerCancel)]).toEqual([1, 0]);
      await settledUncharged(accountId);
    },
  ],
  [
    'expired link',
    async (s) => {
      const { accountId, apiKey, taskId } = await start(s, M.expiredLink);
      const { task } = await follow(apiKey, taskId);
      expect(task).toMatchObject({ state: 'failed', credits: 0 });
      expect(task.output ?? null).toBeNull();
      await settledUncharged(accountId);
    },
  ],
  ['sigkill', (s) => sigkillAndReconciliation(s.adapter)],
];

/** A `mediaforge serve` with the adapter's one deployment (its own server), and what it ran against. */
async function serveProcess(adapter: BehaviourAdapter, name: string, env: Record<string, string>, cost = '') {
  const server = await adapter.start({ ...FIRST, submitFault: () => undefined });
  const file = [
    'upstreams:',
    `  only: { kind: ${adapter.kind}, baseUrl: "${server.baseUrl}", secretEnv: ONLY_KEY${cost} }`,
    'models:',
    `  ${adapter.model}:`,
    `    - { upstream: only, upstreamModel: "${adapter.upstreamModel}" }`,
  ].join('\n');
  const proc = await startMediaforge(
    `${adapter.kind}-${name}`,
    { MEDIAFORGE_DEPLOYMENTS: '$DIR/deployments.yaml', ONLY_KEY: secretOf(adapter), ...env },
    { 'deployments.yaml': file },
  );
  return { server, proc };
}

async function createOn(proc: MediaforgeProcess, adapter: BehaviourAdapter, mark: string) {
  const { accountId, apiKey } = await proc.account(1000);
  const created = await fetch(`${proc.url}/api/v1/jobs/createTask`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: adapter.model, input: { prompt: `a lighthouse ${mark}`, ...adapter.input } }),
  }).then((r) => r.json());
  return { accountId, apiKey, taskId: created.data.taskId as string };
}

const pin = (db: Db, taskId: string) =>
  db.kysely
    .selectFrom('tasks')
    .select(['deployment', 'deployment_handle'])
    .where('id', '=', taskId)
    .executeTakeFirstOrThrow();

/**
 * One `mediaforge serve` per adapter (its own server, one deployment, a cost per second) for the
 * two scenarios that need a process of their own, run side by side:
 * - SIGKILL of the service mid-poll: the restarted service resumes the task on the same deployment
 *   and handle, submitted once;
 * - a job that outlives its task's deadline (not stopped: the protocol has no cancel, or refuses
 *   it for a running job) is reconciled: the client's outcome stays expired and uncharged, the
 *   job's end and cost are recorded, and `report margin` shows the cost as abandoned.
 */
/** Serve processes at once: ten adapters' processes side by side starve a 2-core machine, and a starved one misses its timings. */
const PROCESSES_AT_ONCE = 2;
let running = 0;
const waiting: (() => void)[] = [];
async function oneOfFew<T>(body: () => Promise<T>): Promise<T> {
  while (running >= PROCESSES_AT_ONCE) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await body();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

async function sigkillAndReconciliation(adapter: BehaviourAdapter) {
  return oneOfFew(() => sigkillAndReconciliationNow(adapter));
}

async function sigkillAndReconciliationNow(adapter: BehaviourAdapter) {
  const reconciles = adapter.unsupported.reconciliation === undefined;
  const { server, proc } = await serveProcess(
    adapter,
    'serve',
    {
      MEDIAFORGE_UPSTREAM_POLL_MS: '200',
      MEDIAFORGE_LEASE_MS: '1500',
      MEDIAFORGE_TASK_DEADLINE_SECONDS: '600',
      MEDIAFORGE_UPSTREAM_RECONCILE_POLL_MS: '300',
    },
    ', cost: { perSecond: "0.02" }',
  );
  try {
    const killed = await createOn(proc, adapter, M.sigkill);
    await waitForTask(proc.url, killed.apiKey, killed.taskId, (r) => r.state === 'running');
    const pinned = await pin(proc.db, killed.taskId);
    expect(pinned.deployment_handle).toContain(jobOf(server, M.sigkill)!.id);
    await crash(proc);
    // The restarted process gives new tasks 3 s (a task keeps the deadline it was accepted with).
    proc.env.MEDIAFORGE_TASK_DEADLINE_SECONDS = '3';
    await proc.restart();
    const task = await waitForTask(proc.url, killed.apiKey, killed.taskId, undefined, 60_000);
    expect(task.state).toBe('succeeded');
    expect(count(server.submits(), M.sigkill)).toBe(1);
    expect(await pin(proc.db, killed.taskId)).toEqual(pinned);
    if (!reconciles) return;

    const late = await createOn(proc, adapter, M.reconcile);
    const expired = await waitForTask(proc.url, late.apiKey, late.taskId, undefined, 30_000);
    expect(expired).toMatchObject({ state: 'expired', errorCode: 'deadline_exceeded', credits: 0 });
    const row = () =>
      proc.db.kysely
        .selectFrom('tasks')
        .select(['state', 'upstream_final_state', 'upstream_cost_micros'])
        .where('id', '=', late.taskId)
        .executeTakeFirstOrThrow();
    await eventually(async () => (await row()).upstream_final_state !== null, 'the reconciliation', 30_000);
    const reconciled = await row();
    expect(reconciled).toMatchObject({ state: 'expired', upstream_final_state: 'succeeded' });
    expect(reconciled.upstream_cost_micros).toBeGreaterThan(0);
    expect(count(server.submits(), M.reconcile)).toBe(1);
    expect(
      await proc.db.kysely
        .selectFrom('wallets')
        .select(['held', 'spent'])
        .where('account_id', '=', late.accountId)
        .executeTakeFirstOrThrow(),
    ).toEqual({ held: 0, spent: 0 });
    const { stdout } = await run(process.execPath, [join(ROOT, 'bin/mediaforge.js'), 'report', 'margin', '--json'], {
      env: { ...process.env, ...proc.env },
    });
    expect(JSON.parse(stdout).rows).toEqual([
      expect.objectContaining({
        model: adapter.model,
        deployment: 'only',
        tasks: 2,
        succeeded: 1,
        abandonedCostUsd: (reconciled.upstream_cost_micros! / 1e6).toFixed(6),
      }),
    ]);
  } finally {
    await proc.stop();
    await server.close();
  }
}

beforeAll(async () => {
  const lines = ['upstreams:'];
  const environment: Record<string, string> = {};
  for (const adapter of ADAPTERS) {
    const s: Served = { adapter, first: await adapter.start(FIRST), second: await adapter.start(SECOND) };
    served.set(adapter.kind, s);
    for (const [which, server] of [
      ['first', s.first],
      ['second', s.second],
    ] as const) {
      lines.push(
        `  ${adapter.kind}-${which}: { kind: ${adapter.kind}, baseUrl: "${server.baseUrl}", secretEnv: ${envName(adapter.kind, which)} }`,
      );
      environment[envName(adapter.kind, which)] = secretOf(adapter);
    }
  }
  lines.push('models:');
  for (const adapter of ADAPTERS)
    lines.push(
      `  ${adapter.model}:`,
      `    - { upstream: ${adapter.kind}-first, upstreamModel: "${adapter.upstreamModel}", priority: 10 }`,
      `    - { upstream: ${adapter.kind}-second, upstreamModel: "${adapter.upstreamModel}", priority: 9 }`,
    );
  t = await startTestService(
    { upstreamPollMs: 50, taskDeadlineMs: DEADLINE_MS },
    { deploymentsPlan: parseDeployments('deployments.yaml', lines.join('\n'), environment) },
  );
}, 60_000);

afterAll(async () => {
  await t?.close();
  for (const s of served.values()) await Promise.all([s.first.close(), s.second.close()]);
});

describe('every adapter is in the suite', () => {
  it.each(LOADED.map((l) => [l.kind, l.missing]))(
    '%s has its behaviour adapter (its row in test/deployments/behaviour/adapters.ts)',
    (_kind, missing) => {
      expect(missing).toBeUndefined();
    },
  );

  it('no two adapters share a model (scenarios of one adapter never reach another)', () => {
    expect(new Set(ADAPTERS.map((a) => a.model)).size).toBe(ADAPTERS.length);
  });
});

/**
 * The scenarios whose result reaches the media store (stored, or its download cut off by an
 * expired link). The S3 projects run these again with the media in S3; the others store nothing,
 * so there they would repeat the local-store projects' run (the sigkill scenario's restarted
 * process stores its result as `success` does, through the same path: the statement record, which
 * fails CI when a store operation ran only on the local store, checks that).
 */
const STORING: ReadonlySet<Scenario> = new Set<Scenario>([
  'success',
  'busy failover',
  'unauthorized failover',
  'expired link',
]);
const ON_S3 = Object.keys(testStoreEnvironment()).length > 0;

// Every adapter's scenarios interleave (vitest's maxConcurrency at a time): they share nothing but the service.
describe.concurrent('behaviour', () => {
  for (const adapter of ADAPTERS) {
    describe(`${adapter.kind}`, () => {
      for (const [scenario, body] of SCENARIOS) {
        const why = adapter.unsupported[scenario];
        if (why !== undefined) {
          // Declared, not skipped in silence: the report names the scenario and what the protocol cannot express.
          it.skip(`${scenario}: unsupported: ${why}`, () => {});
          continue;
        }
        if (ON_S3 && !STORING.has(scenario)) {
          it.skip(`${scenario}: stores no media: run on the local-store projects`, () => {});
          continue;
        }
        const title =
          scenario === 'sigkill' && adapter.unsupported.reconciliation === undefined
            ? 'sigkill; reconciliation'
            : scenario;
        // The process scenarios may wait their turn (oneOfFew) behind the others.
        it(title, () => body(served.get(adapter.kind)!), scenario === 'sigkill' ? 400_000 : 120_000);
      }
      // Reconciliation runs in the sigkill scenario's process; a protocol that cannot express it says so here.
      const why = adapter.unsupported.reconciliation;
      if (why !== undefined) it.skip(`reconciliation: unsupported: ${why}`, () => {});
    });
  }
});
