import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkLedger } from '../support/service.js';
import { modelsSection } from '../support/deployments-yaml.js';
import type { Service } from '../../runtime/service.js';
import { ROOT } from '../support/root.js';
import { marginReport, microsToUsd } from '../../runtime/routing/margin.js';
import { IMAGE, MODEL_D, MODEL_MINI } from '../http/helpers.js';
import { call, crash, startMediaforge, waitForTask, type MediaforgeProcess } from './support.js';

const run = promisify(execFile);
const FAIL = 'UPSTREAM-FAIL-SWITCH';

/**
 * Two real mediaforge processes chained over real HTTP (issue 17): the edge routes one model to the
 * upstream through the jobs protocol (/api/v1, with upstream callbacks) and another through
 * openai-videos (/v1). The upstream is a plain mediaforge running its simulator, with its own
 * database, wallet and signing secret; the edge only knows its URL and an API key (by variable).
 */
describe('an edge mediaforge chained to an upstream mediaforge', () => {
  let upstream: MediaforgeProcess;
  let edge: MediaforgeProcess;
  let upstreamAccount: { accountId: string; apiKey: string };
  let edgeAccount: { accountId: string; apiKey: string };

  beforeAll(async () => {
    // The upstream calls back to the edge on loopback: its test switches allow that destination.
    upstream = await startMediaforge('upstream', {
      MEDIAFORGE_SIMULATOR_LATENCY_MS: '800',
      MEDIAFORGE_SIMULATOR_FAIL_WHEN_PROMPT_CONTAINS: FAIL,
      MEDIAFORGE_WEBHOOK_ALLOW_PRIVATE: '1',
      MEDIAFORGE_WEBHOOK_ALLOW_INSECURE: '1',
    });
    upstreamAccount = await upstream.account(100_000);
    // The upstream mediaforge takes https references only, and the edge's own links are http on
    // loopback: the edge sends the customer's URLs as they are (`references: original`, issue 37
    // point 3; test/deployments/reference-links.test.ts covers the stored copies).
    const deployments = [
      'upstreams:',
      '  up-jobs:',
      '    kind: jobs',
      '    references: original',
      `    baseUrl: ${upstream.url}/api/v1`,
      '    secretEnv: CHAINED_UPSTREAM_KEY',
      '    callbacks: true',
      '    maxInFlight: 4',
      '    cost: { perSecond: "0.02" }',
      '  up-openai:',
      '    kind: openai-videos',
      '    references: original',
      `    baseUrl: ${upstream.url}/v1`,
      '    secretEnv: CHAINED_UPSTREAM_KEY',
      '    cost: { perVideo: "0.10" }',
      ...modelsSection({ [MODEL_D]: 'up-jobs', [MODEL_MINI]: 'up-openai' }),
    ].join('\n');
    // A short lease: the SIGKILL below can land mid-poll, and the restarted edge takes the item over once its lease has run out.
    edge = await startMediaforge(
      'edge',
      {
        MEDIAFORGE_DEPLOYMENTS: '$DIR/deployments.yaml',
        CHAINED_UPSTREAM_KEY: upstreamAccount.apiKey,
        MEDIAFORGE_UPSTREAM_POLL_MS: '200',
        MEDIAFORGE_LEASE_MS: '3000',
      },
      { 'deployments.yaml': deployments },
    );
    edgeAccount = await edge.account(10_000);
  }, 60_000);

  afterAll(async () => {
    await edge?.stop();
    await upstream?.stop();
  });

  const ledgers = async () => {
    await checkLedger({ ctx: { db: edge.db } } as unknown as Service, edgeAccount.accountId);
    await checkLedger({ ctx: { db: upstream.db } } as unknown as Service, upstreamAccount.accountId);
  };
  const wallet = (proc: MediaforgeProcess, accountId: string) =>
    proc.db.kysely.selectFrom('wallets').selectAll().where('account_id', '=', accountId).executeTakeFirstOrThrow();
  const edgeRow = (taskId: string) =>
    edge.db.kysely.selectFrom('tasks').selectAll().where('id', '=', taskId).executeTakeFirstOrThrow();
  const upstreamRow = (taskId: string) =>
    upstream.db.kysely.selectFrom('tasks').selectAll().where('id', '=', taskId).executeTakeFirstOrThrow();
  const sha256 = async (url: string) =>
    createHash('sha256')
      .update(Buffer.from(await (await fetch(url)).arrayBuffer()))
      .digest('hex');

  it('serves only the routed models; another model is refused with no_deployment and nothing held', async () => {
    const models = await call(edge.url, 'GET', '/api/v1/models', edgeAccount.apiKey);
    expect(models.body.data.items.map((m: { id: string }) => m.id).sort()).toEqual([MODEL_D, MODEL_MINI].sort());
    const other = {
      model: 'vendor_b/family_c-2.6/reference-to-video',
      input: { prompt: 'a lighthouse', reference_image_urls: [IMAGE] },
    };
    for (const path of ['/api/v1/jobs/createTask', '/api/v1/jobs/quote']) {
      const refused = await call(edge.url, 'POST', path, edgeAccount.apiKey, other);
      expect(refused.status).toBe(503);
      expect(refused.body.code).toBe(50301);
    }
    expect(await wallet(edge, edgeAccount.accountId)).toMatchObject({ held: 0, spent: 0 });
  });

  it.each([
    // The operator's cost: 0.02 USD per started second of the measured output, or 0.10 per video.
    [
      'jobs',
      MODEL_D,
      { prompt: 'a fox in the snow, Picture 1', reference_image_urls: [IMAGE] },
      'up-jobs',
      (seconds: number) => Math.ceil(seconds) * 20_000,
    ],
    [
      'openai-videos',
      MODEL_MINI,
      { prompt: 'a fox in the snow', reference_image_urls: [IMAGE], duration_seconds: 4 },
      'up-openai',
      () => 100_000,
    ],
  ])(
    'through %s: succeeds at the edge, media from the edge store, each wallet moved by its own charge',
    async (_kind, model, input, deployment, costOf) => {
      const edgeBefore = await wallet(edge, edgeAccount.accountId);
      const upstreamBefore = await wallet(upstream, upstreamAccount.accountId);
      const quote = await call(edge.url, 'POST', '/api/v1/jobs/quote', edgeAccount.apiKey, { model, input });
      expect(quote.status).toBe(200);
      const created = await call(edge.url, 'POST', '/api/v1/jobs/createTask?wait=30', edgeAccount.apiKey, {
        model,
        input,
      });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const task = created.body.data;
      expect(task.state).toBe('succeeded');
      expect(task.credits).toBe(quote.body.data.estimatedCredits);

      // Pinned: the deployment's name and the upstream's id are on the task; what the operator pays, too.
      const row = await edgeRow(task.taskId);
      expect(row).toMatchObject({ deployment, upstream_cost_micros: costOf(task.output.assets[0].durationSeconds) });
      const upstreamTask = await upstreamRow(row.deployment_handle!);
      expect(upstreamTask).toMatchObject({ state: 'succeeded', account_id: upstreamAccount.accountId, model });

      // The client only sees the edge's own signed link, to bytes in the edge's own store: the upstream's media.
      const [asset] = task.output.assets;
      expect(asset.url.startsWith(`${edge.url}/api/v1/media/`)).toBe(true);
      const key = (JSON.parse(row.output_json!) as { key: string }[])[0].key;
      expect(existsSync(join(edge.dir, 'blobs', key))).toBe(true);
      const upstreamKey = (JSON.parse(upstreamTask.output_json ?? '[]') as { key: string }[])[0]?.key;
      if (deployment === 'up-jobs') {
        expect(await sha256(asset.url)).toBe(
          createHash('sha256')
            .update(readFileSync(join(upstream.dir, 'blobs', upstreamKey)))
            .digest('hex'),
        );
        // callbacks: true: the upstream was handed the edge's signed callback URL and called it (204) when its task ended.
        const callback = () =>
          upstream.db.kysely
            .selectFrom('webhook_deliveries')
            .selectAll()
            .where('task_id', '=', upstreamTask.id)
            .where('kind', '=', 'callback')
            .executeTakeFirst();
        for (const until = Date.now() + 5000; (await callback())?.state !== 'delivered' && Date.now() < until; )
          await new Promise((r) => setTimeout(r, 50));
        expect(await callback()).toMatchObject({ state: 'delivered', last_status: 204 });
        expect((await callback())!.url.startsWith(`${edge.url}/upstream-callbacks/up-jobs/${task.taskId}?sig=`)).toBe(
          true,
        );
      } else {
        // openai-videos: DELETE once the bytes are stored at the edge (just after the edge task resolved).
        const purged = async () => (await upstreamRow(row.deployment_handle!)).purged_at;
        for (const until = Date.now() + 5000; (await purged()) === null && Date.now() < until; )
          await new Promise((r) => setTimeout(r, 50));
        expect(await purged()).not.toBeNull();
      }
      // Measured from the stored bytes: the clip's length as encoded (within half a second of what was asked).
      expect(asset.durationSeconds).toBeCloseTo((input as { duration_seconds?: number }).duration_seconds ?? 5, 0);

      const edgeAfter = await wallet(edge, edgeAccount.accountId);
      const upstreamAfter = await wallet(upstream, upstreamAccount.accountId);
      expect(edgeAfter.spent - edgeBefore.spent).toBe(task.credits);
      expect(upstreamAfter.spent - upstreamBefore.spent).toBe(upstreamTask.charged_credits);
      expect(upstreamTask.charged_credits).toBeGreaterThan(0);
      expect([edgeAfter.held, upstreamAfter.held]).toEqual([0, 0]);
      await ledgers();
    },
  );

  it("the upstream simulator's fail switch fails the edge task: hold released, an English reason without the upstream's identifiers", async () => {
    const before = await wallet(edge, edgeAccount.accountId);
    const created = await call(edge.url, 'POST', '/api/v1/jobs/createTask?wait=30', edgeAccount.apiKey, {
      model: MODEL_D,
      input: { prompt: `a fox ${FAIL}, Picture 1`, reference_image_urls: [IMAGE] },
    });
    const task = created.body.data;
    expect(task).toMatchObject({ state: 'failed', errorCode: 'generation_failed', credits: 0 });
    expect(task.errorMessage).toBe('Content policy violation: the prompt was rejected by the safety filter.');
    const row = await edgeRow(task.taskId);
    expect(task.errorMessage).not.toContain(row.deployment_handle);
    expect(await upstreamRow(row.deployment_handle!)).toMatchObject({ state: 'failed', charged_credits: 0 });
    expect(await wallet(edge, edgeAccount.accountId)).toMatchObject({ held: 0, spent: before.spent });
    expect((await wallet(upstream, upstreamAccount.accountId)).held).toBe(0);
    await ledgers();
  });

  it('SIGKILL of the edge mid-poll: the restarted edge resumes the task on the same deployment, submitted once', async () => {
    const prompt = `restart ${Date.now()}, Picture 1`;
    const created = await call(edge.url, 'POST', '/api/v1/jobs/createTask', edgeAccount.apiKey, {
      model: MODEL_D,
      input: { prompt, reference_image_urls: [IMAGE] },
    });
    expect(created.status).toBe(202);
    const taskId = created.body.data.taskId;
    await waitForTask(edge.url, edgeAccount.apiKey, taskId, (r) => r.state === 'running');
    const pinned = await edgeRow(taskId);
    expect(pinned.deployment_handle).not.toBeNull();
    await crash(edge);
    await edge.restart();
    const task = await waitForTask(edge.url, edgeAccount.apiKey, taskId);
    expect(task.state).toBe('succeeded');
    const row = await edgeRow(taskId);
    expect([row.deployment, row.deployment_handle]).toEqual([pinned.deployment, pinned.deployment_handle]);
    const upstreamTasks = await upstream.db.kysely
      .selectFrom('tasks')
      .select('id')
      .where('account_id', '=', upstreamAccount.accountId)
      .where('input_json', 'like', `%${prompt}%`)
      .execute();
    expect(upstreamTasks.map((t) => t.id)).toEqual([pinned.deployment_handle]);
    await ledgers();
  }, 60_000);

  it('mediaforge report margin and deployments status read what happened, per model and deployment', async () => {
    const cli = (...args: string[]) =>
      run(process.execPath, [join(ROOT, 'bin/mediaforge.js'), ...args, '--json'], {
        env: { ...process.env, ...edge.env },
      });
    const margin = JSON.parse((await cli('report', 'margin')).stdout);
    const jobs = margin.rows.find((r: { deployment: string }) => r.deployment === 'up-jobs');
    const costs = await edge.db.kysely
      .selectFrom('tasks')
      .select('upstream_cost_micros')
      .where('deployment', '=', 'up-jobs')
      .where('state', '=', 'succeeded')
      .execute();
    expect(costs.map((c) => c.upstream_cost_micros! > 0)).toEqual([true, true]);
    expect(jobs).toMatchObject({
      model: MODEL_D,
      tasks: 3,
      succeeded: 2,
      upstreamCostUsd: microsToUsd(costs.reduce((sum, c) => sum + c.upstream_cost_micros!, 0)),
      succeededWithoutCost: 0,
    });
    expect(jobs.revenueCredits).toBeGreaterThan(0);
    expect(margin.rows.find((r: { deployment: string }) => r.deployment === 'up-openai')).toMatchObject({
      model: MODEL_MINI,
      tasks: 1,
      succeeded: 1,
      upstreamCostUsd: '0.100000',
    });
    expect((await marginReport(edge.db.kysely, Date.parse('2999-01-01'))).rows).toEqual([]);
    const status = JSON.parse((await cli('deployments', 'status')).stdout);
    expect(
      status.deployments.map((d: { name: string; kind: string; state: string; inFlight: number }) => [
        d.name,
        d.kind,
        d.state,
        d.inFlight,
      ]),
    ).toEqual([
      ['up-jobs', 'jobs', 'ok', 0],
      ['up-openai', 'openai-videos', 'ok', 0],
    ]);
    // Counts are added to the shared totals every 2 s: the SIGKILL above may have taken the last of the first process's.
    expect(status.deployments[0].submits).toBeGreaterThanOrEqual(1);
    expect(status.deployments[1].submits).toBe(1);
  }, 30_000);
});
