import { storedRow } from '../support/stored-rows.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bodyD, MODEL_D } from '../http/helpers.js';
import { ACME_PROFILE } from '../support/acme-profile.js';
import { AcmeServer } from '../support/acme-server.js';
import { LumaServer } from '../../support/upstreams/vendors/luma-server.js';
import { type MediaforgeProcess, startMediaforge, waitForTask } from './support.js';
import { type ServedCopy, serveWithProfiles } from './profile-copy.js';
import { bothModels, createOn, deploymentsFile, marginReport, reconciled, textTask } from './profile-deployments.js';

/**
 * Issue 37, point 2, for the provider profiles: a submit whose answer is lost (the vendor made the
 * job, then the connection was cut) on a profile without an idempotency key fails its task with
 * nothing charged, and the job it may have made is found where the profile declares `find`: by
 * the vendor's list of jobs (Luma's GET /generations, matched on the request it echoes and its
 * creation time), or by an id the submit chose (Acme's `reference`, a profile declaring
 * `find.byId`). Found, the job is reconciled as today's find-job rules say (its end and cost
 * recorded, then counted as abandoned), and `report margin` no longer counts it as possibly
 * abandoned; a submit that made nothing is found absent. Real `mediaforge serve` processes.
 */

/** What the margin report says of the one deployment's tasks. */
const totalsOf = async (proc: MediaforgeProcess) => (await marginReport(proc)).totals;

describe('a lost submit on a profile that declares a list call (Luma: GET /generations)', () => {
  const KEY = 'luma-operator-key';
  let proc: MediaforgeProcess | undefined;
  let upstream: LumaServer | undefined;
  afterEach(async () => {
    await proc?.stop();
    await upstream?.close();
    [proc, upstream] = [undefined, undefined];
  });

  async function serve(override: 'reset-after-create' | 'reset') {
    upstream = await new LumaServer({
      latencyMs: 500,
      apiKey: KEY,
      submit: (i) => (i === 0 ? override : undefined),
    }).start();
    const file = deploymentsFile(
      'luma',
      { up: { baseUrl: upstream.baseUrl, secretEnv: 'LUMA_KEY', extra: ', cost: { perSecond: "0.02" }' } },
      bothModels('ray-2'),
    );
    proc = await startMediaforge(
      'luma-find',
      {
        MEDIAFORGE_DEPLOYMENTS: '$DIR/deployments.yaml',
        LUMA_KEY: KEY,
        MEDIAFORGE_UPSTREAM_POLL_MS: '100',
        MEDIAFORGE_UPSTREAM_RECONCILE_POLL_MS: '300',
      },
      { 'deployments.yaml': file },
    );
    const { apiKey } = await proc.account(1000);
    const taskId = await createOn(proc.url, apiKey, textTask('a lantern on a pier', { duration_seconds: 5 }));
    const failed = await waitForTask(proc.url, apiKey, taskId, undefined, 15_000);
    expect(failed).toMatchObject({ state: 'failed', errorCode: 'internal_error', credits: 0 });
    return { upstream, proc, taskId };
  }

  it("the job the cut submit made is found in Luma's list and reconciled: its end and cost recorded, nothing downloaded, counted abandoned, no longer possibly abandoned", async () => {
    const { upstream, proc, taskId } = await serve('reset-after-create');
    expect(upstream.jobs.size).toBe(1);
    expect(await reconciled(proc.db, taskId)).toEqual({
      state: 'failed',
      upstream_final_state: 'succeeded',
      upstream_cost_micros: 100_000,
    });
    expect(upstream.lists).toBeGreaterThanOrEqual(1);
    expect(upstream.submits.length).toBe(1);
    expect(upstream.downloads).toBe(0);
    const handle = (await storedRow(proc.db, 'tasks', { id: taskId })).deployment_handle;
    expect(handle).toContain([...upstream.jobs.keys()][0]);
    expect(await totalsOf(proc)).toMatchObject({
      abandonedCostUsd: '0.100000',
      possiblyAbandoned: 0,
      possiblyAbandonedCostUsd: '0.000000',
    });
  }, 60_000);

  it("a cut submit that made nothing: Luma's list shows no such generation, the task is recorded absent and no longer counted", async () => {
    const { upstream, proc, taskId } = await serve('reset');
    expect(await reconciled(proc.db, taskId)).toEqual({
      state: 'failed',
      upstream_final_state: 'absent',
      upstream_cost_micros: null,
    });
    expect(upstream.jobs.size).toBe(0);
    expect(await totalsOf(proc)).toMatchObject({ possiblyAbandoned: 0, possiblyAbandonedCostUsd: '0.000000' });
  }, 60_000);
});

/**
 * The worked example's profile (spec/providers/acme.yaml) with the id the submit chooses: the task's
 * id written into the request as `reference`, and `find.byId` reading the render by it.
 */
const ACME_BY_ID = ACME_PROFILE.replace(
  '    text: "{input.prompt}"\n',
  '    text: "{input.prompt}"\n    reference: "{taskId}"\n',
).replace(
  /^probe: /m,
  'find:\n  byId: { method: GET, path: "/v2/renders?reference={taskId}", handle: { id: render.uid }, absent: [404] }\nprobe: ',
);

describe('a lost submit on a profile that declares a client-chosen id (find.byId, generated in a copy of the checkout)', () => {
  let served: ServedCopy | undefined;
  let upstream: AcmeServer;
  let service: MediaforgeProcess;
  let key: string;

  beforeAll(async () => {
    expect(ACME_BY_ID).toContain('reference: "{taskId}"');
    expect(ACME_BY_ID).toContain('byId:');
    upstream = await new AcmeServer({ name: 'only' }).start();
    served = await serveWithProfiles(
      'acme-find',
      { 'acme.yaml': ACME_BY_ID },
      `upstreams:
  acme: { kind: acme, baseUrl: "${upstream.url}", secretEnv: ACME_KEY, cost: { perSecond: "0.02" } }
models:
  ${MODEL_D}:
    - { upstream: acme, upstreamModel: acme-render-2 }
`,
      { ACME_KEY: AcmeServer.key, MEDIAFORGE_UPSTREAM_RECONCILE_POLL_MS: '300' },
    );
    ({ service, key } = served);
  }, 180_000);

  afterAll(async () => {
    await served?.stop();
    await upstream?.close();
  });

  const lost = async (prompt: string) => {
    const taskId = await createOn(service.url, key, bodyD(prompt, { duration_seconds: 5 }));
    const failed = await waitForTask(service.url, key, taskId, undefined, 15_000);
    expect(failed).toMatchObject({ state: 'failed', errorCode: 'internal_error', credits: 0 });
    return taskId;
  };

  it("the render the cut submit made is read by the task's id and reconciled: its end and cost recorded, counted abandoned, no longer possibly abandoned", async () => {
    const taskId = await lost('lost-answer of a lighthouse');
    const [render] = [...upstream.renders.values()].filter((r) => r.body.reference === taskId);
    expect(render).toBeDefined();
    expect(await reconciled(service.db, taskId)).toEqual({
      state: 'failed',
      upstream_final_state: 'succeeded',
      upstream_cost_micros: 100_000,
    });
    expect(upstream.requests).toContain('GET /v2/renders');
    const row = await service.db.kysely
      .selectFrom('tasks')
      .select('deployment_handle')
      .where('id', '=', taskId)
      .executeTakeFirstOrThrow();
    expect(row.deployment_handle).toContain(render.uid);
    const margin = (await marginReport(service)).rows.find((r: { deployment: string }) => r.deployment === 'acme');
    expect(margin).toMatchObject({ possiblyAbandoned: 0, abandonedCostUsd: '0.100000' });
  }, 60_000);

  it("a cut submit that made nothing: the read by the task's id answers 404, the task is recorded absent and no longer counted", async () => {
    const taskId = await lost('lost-submit of a harbour');
    expect([...upstream.renders.values()].filter((r) => r.body.reference === taskId)).toEqual([]);
    expect(await reconciled(service.db, taskId)).toEqual({
      state: 'failed',
      upstream_final_state: 'absent',
      upstream_cost_micros: null,
    });
    const margin = (await marginReport(service)).rows.find((r: { deployment: string }) => r.deployment === 'acme');
    expect(margin).toMatchObject({ possiblyAbandoned: 0 });
  }, 60_000);
});
