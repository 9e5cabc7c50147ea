import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../runtime/config.js';
import { parseDeployments } from '../../runtime/routing/deployments-file.js';
import { askedClip } from '../../support/media/fixtures.js';
import { bodyD, createTask, MODEL_D, PRICE_D } from '../http/helpers.js';
import { JobsProtocolServer, type JobsServerOptions } from '../../support/upstreams/jobs-protocol-server.js';
import { ReplicateServer } from '../../support/upstreams/replicate-server.js';
import { closedAfterEach } from './support.js';
import { modelsSection } from '../support/deployments-yaml.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';
import { drip, endless } from '../../support/upstreams/slow-results.js';

/**
 * Result downloads (issue 25, N2 and N7) against the loopback protocol servers of test/support,
 * with a drip-feeding result (support/upstreams/slow-results.ts) and an upstream answering more links
 * than the model returns: a download longer than a lease runs once; a download is bounded in total
 * by MEDIAFORGE_UPSTREAM_RESULT_TIMEOUT_SECONDS and cut at the task's deadline, on the upstream's
 * own origin and elsewhere; a lease taken over aborts the download; one account's slow downloads
 * stay within its share of the task lane; at most one video (and the last frame where asked) is
 * stored; a result past the size cap fails the task at once. Counts are the servers' and the
 * store's, never times. The SIGTERM case (N11) is in downloads-shutdown.test.ts.
 */
const LAST_FRAME_MODEL = 'vendor_a/family_a-2.0-fast/text-to-video';
const REPLICATE_MODEL = 'vendor-d/family-d-r2v';

/** `localhost` is another origin for a server on 127.0.0.1: its links go through the outbound guard. */
const ELSEWHERE: Partial<Config> = {
  webhookAllowPrivate: true,
  webhookAllowInsecure: true,
  outboundResolver: async () => [{ address: '127.0.0.1', family: 4 }],
};

type Origin = 'own origin' | 'elsewhere';
const ORIGINS: Origin[] = ['own origin', 'elsewhere'];

describe('result downloads: once, bounded, within their share, only what the model returns', () => {
  const opened = closedAfterEach();

  async function serveJobs(options: JobsServerOptions, config: Partial<Config> = {}, origin: Origin = 'own origin') {
    const server = await new JobsProtocolServer({
      latencyMs: 100,
      ...(origin === 'elsewhere' ? { resultHost: 'localhost' } : {}),
      ...options,
    }).start();
    opened.servers.push(server);
    const plan = parseDeployments(
      'deployments.yaml',
      [
        'upstreams:',
        `  up: { kind: jobs, baseUrl: "${server.baseUrl}" }`,
        ...modelsSection({ [MODEL_D]: 'up', [LAST_FRAME_MODEL]: 'up' }),
      ].join('\n'),
    );
    const t = await startTestService(
      { upstreamPollMs: 50, ...(origin === 'elsewhere' ? ELSEWHERE : {}), ...config },
      { deploymentsPlan: plan },
    );
    opened.service = t;
    return { server, t };
  }

  /** The task's stored output objects, and whether any write was left half done. */
  function stored(service: TestService, taskId: string): { outputs: string[]; partial: string[] } {
    const root = join(service.config.dataDir, 'blobs');
    const list = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);
    // Output keys are the storing claim's own (issue 37): `<claim>-<index>.<ext>`. The files of one claim read as their
    // index names; files of more than one claim keep their full names, so no expected list matches them.
    const files = list(join(root, 'outputs', taskId)).sort();
    const claims = new Set(files.map((file) => file.slice(0, file.lastIndexOf('-'))));
    const outputs = claims.size === 1 ? files.map((file) => file.slice(file.lastIndexOf('-') + 1)) : files;
    return { outputs, partial: list(join(root, '.partial')) };
  }

  async function until(what: string, condition: () => boolean, timeoutMs = 10_000): Promise<void> {
    for (const end = Date.now() + timeoutMs; !condition(); ) {
      if (Date.now() > end) throw new Error(`not within ${timeoutMs} ms: ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  it('a result that downloads for longer than the lease is fetched once and stored once', async () => {
    const { server, t } = await serveJobs(
      { result: (job) => drip(askedClip(job.model, job.input, job.seconds), 3000) },
      { leaseMs: 900 },
    );
    const { accountId, apiKey } = await t.account(1000);
    const created = await createTask(t, apiKey, bodyD('slow result, Picture 1'));
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 20_000);
    expect(task.state).toBe('succeeded');
    expect(server.downloads).toBe(1);
    expect(server.results).toMatchObject({ open: 0, completed: 1, cut: 0 });
    expect(stored(t, task.taskId)).toEqual({ outputs: ['0.mp4'], partial: [] });
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: PRICE_D });
    await t.checkLedger(accountId);
  });

  it.each(ORIGINS)(
    "%s: a result still arriving at the task's deadline is cut there; the task expires, its hold released, nothing stored",
    async (origin) => {
      const { server, t } = await serveJobs(
        { result: (job) => drip(askedClip(job.model, job.input, job.seconds), 30_000) },
        { taskDeadlineMs: 2500 },
        origin,
      );
      const { accountId, apiKey } = await t.account(1000);
      const created = await createTask(t, apiKey, bodyD('past the deadline, Picture 1'));
      const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 20_000);
      expect(task).toMatchObject({ state: 'expired', errorCode: 'deadline_exceeded', credits: 0 });
      await until('the download ends', () => server.downloads === 1 && server.results.open === 0);
      expect(server.results).toMatchObject({ completed: 0, cut: 1 });
      // The task expired on its own item while the download ran; the cut write's file goes once the cut reaches the store.
      await until('the cut write is removed', () => stored(t, task.taskId).partial.length === 0);
      expect(stored(t, task.taskId)).toEqual({ outputs: [], partial: [] });
      expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
      await t.checkLedger(accountId);
    },
  );

  // Elsewhere, openCapped bounded the whole exchange by the setting already; on the upstream's origin only the headers were.
  it.each(['own origin'] as Origin[])(
    '%s: MEDIAFORGE_UPSTREAM_RESULT_TIMEOUT_SECONDS bounds the whole download: a drip past it is cut, the next poll fetches the result again',
    async (origin) => {
      const { server, t } = await serveJobs(
        {
          result: (job, n) =>
            n === 1
              ? drip(askedClip(job.model, job.input, job.seconds), 30_000)
              : askedClip(job.model, job.input, job.seconds),
        },
        { upstreamResultTimeoutMs: 1500 },
        origin,
      );
      const { accountId, apiKey } = await t.account(1000);
      const created = await createTask(t, apiKey, bodyD('a drip past the timeout, Picture 1'));
      const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 20_000);
      expect(task.state).toBe('succeeded');
      expect(server.downloads).toBe(2);
      expect(server.results).toMatchObject({ open: 0, completed: 0, cut: 1 });
      expect(stored(t, task.taskId)).toEqual({ outputs: ['0.mp4'], partial: [] });
      expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: PRICE_D });
      await t.checkLedger(accountId);
    },
  );

  it('a download whose lease another worker took over is aborted; the item runs once more and the task succeeds once', async () => {
    const { server, t } = await serveJobs(
      {
        result: (job, n) =>
          n === 1
            ? drip(askedClip(job.model, job.input, job.seconds), 30_000)
            : askedClip(job.model, job.input, job.seconds),
      },
      { leaseMs: 1500 },
    );
    const { accountId, apiKey } = await t.account(1000);
    const created = await createTask(t, apiKey, bodyD('taken over, Picture 1'));
    const taskId = created.body.data.taskId;
    await until('the first download is open', () => server.results.open === 1);
    // Another worker claims the poll item, as one does once a lease ran out (its own lease of a second).
    const taken = await t.service.ctx.db.kysely
      .updateTable('work_items')
      .set({ lease_owner: 'worker_other', lease_until: Date.now() + 1000 })
      .where('task_id', '=', taskId)
      .where('kind', '=', 'poll')
      .where('done_at', 'is', null)
      .executeTakeFirst();
    expect(Number(taken.numUpdatedRows)).toBe(1);
    const task = await waitForTerminal(t, apiKey, taskId, 20_000);
    expect(task.state).toBe('succeeded');
    expect(server.downloads).toBe(2);
    expect(server.results).toMatchObject({ open: 0, completed: 0, cut: 1 });
    expect(stored(t, taskId)).toEqual({ outputs: ['0.mp4'], partial: [] });
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: PRICE_D });
    await t.checkLedger(accountId);
  });

  it("one account's slow downloads stay within its share of the task lane: another account's task is not held behind them", async () => {
    const LEASE_MS = 2_000;
    const { server, t } = await serveJobs(
      {
        result: (job) =>
          job.prompt.includes('slow')
            ? // 30 s: B's task must be through while these still drip (a loaded 2-core machine took over 9 s
              // from A's downloads opening to B's task ending, and a 15 s drip had ended by then).
              drip(askedClip(job.model, job.input, job.seconds), 30_000)
            : askedClip(job.model, job.input, job.seconds),
      },
      // A lease of 2 s, renewed every 667 ms: the stalls of a loaded 2-core CI (900 ms, renewed every
      // 300 ms, once lapsed there and A's item was claimed and fetched again) leave it standing.
      { leaseMs: LEASE_MS, workerConcurrency: 3, workerAccountCap: 2 },
    );
    const a = await t.account(1000);
    const b = await t.account(1000);
    const slow = await Promise.all(
      [1, 2].map(async (i) => (await createTask(t, a.apiKey, bodyD(`slow ${i}, Picture 1`))).body.data.taskId),
    );
    await until("both of A's downloads are open", () => server.results.open === 2);
    // Several leases long: a lease that ran out would have let A's items be claimed again by now.
    await new Promise((resolve) => setTimeout(resolve, 3 * LEASE_MS));
    const quick = await createTask(t, b.apiKey, bodyD('quick, Picture 1'));
    const done = await waitForTerminal(t, b.apiKey, quick.body.data.taskId, 10_000);
    expect(done.state).toBe('succeeded');
    // B was through while every one of A's downloads was still open.
    expect(server.results).toMatchObject({ open: 2, completed: 0, cut: 0 });
    for (const taskId of slow) expect((await waitForTerminal(t, a.apiKey, taskId, 60_000)).state).toBe('succeeded');
    expect(server.downloads).toBe(3);
    expect(server.results).toMatchObject({ open: 0, completed: 2, cut: 0 });
    expect(await t.wallet(a.accountId)).toMatchObject({ held: 0, spent: 2 * PRICE_D });
    await t.checkLedger(a.accountId);
    await t.checkLedger(b.accountId);
  }, 120_000);

  it('Replicate answering 300 links: one video is fetched and stored', async () => {
    const server = await new ReplicateServer({ latencyMs: 100, outputLinks: 300 }).start();
    opened.servers.push(server);
    const plan = parseDeployments(
      'deployments.yaml',
      [
        'upstreams:',
        `  up: { kind: replicate, baseUrl: "${server.baseUrl}" }`,
        'models:',
        `  ${MODEL_D}:`,
        `    - { upstream: up, upstreamModel: "${REPLICATE_MODEL}" }`,
      ].join('\n'),
    );
    const t = await startTestService({ upstreamPollMs: 50 }, { deploymentsPlan: plan });
    opened.service = t;
    const { accountId, apiKey } = await t.account(1000);
    const created = await createTask(t, apiKey, bodyD('three hundred links, Picture 1'));
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 20_000);
    expect(task.state).toBe('succeeded');
    expect(task.output.assets).toHaveLength(1);
    expect(server.downloads).toBe(1);
    expect(stored(t, task.taskId)).toEqual({ outputs: ['0.mp4'], partial: [] });
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: PRICE_D });
    await t.checkLedger(accountId);
  });

  it.each([
    [true, ['0.mp4', '1.png']],
    [false, ['0.mp4']],
  ])(
    'an upstream listing a video, its last frame and 50 more videos: return_last_frame %s stores %j',
    async (lastFrame, files) => {
      const { server, t } = await serveJobs({ lastFrameAsset: true, extraAssets: 50 });
      const { accountId, apiKey } = await t.account(1000);
      const created = await createTask(t, apiKey, {
        model: LAST_FRAME_MODEL,
        input: { prompt: 'a lighthouse at dusk', return_last_frame: lastFrame },
      });
      expect(created.status).toBe(202);
      const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 20_000);
      expect(task.state).toBe('succeeded');
      expect(task.output.assets.map((a: { mime: string }) => a.mime)).toEqual(
        lastFrame ? ['video/mp4', 'image/png'] : ['video/mp4'],
      );
      expect(server.downloads).toBe(files.length);
      expect(stored(t, task.taskId)).toEqual({ outputs: files, partial: [] });
      expect(await t.wallet(accountId)).toMatchObject({ held: 0 });
      await t.checkLedger(accountId);
    },
  );

  it.each([
    ['own origin', 'an endless body'],
    ['elsewhere', 'an endless body'],
    ['own origin', 'a declared Content-Length past the cap'],
    ['elsewhere', 'a declared Content-Length past the cap'],
  ] as [Origin, string][])(
    '%s, %s: the result is too large, the task fails at once with its hold released, fetched once',
    async (origin, kind) => {
      const { server, t } = await serveJobs(
        { result: () => (kind === 'an endless body' ? endless() : Buffer.alloc(2_000_000)) },
        { upstreamResultMaxBytes: 1_000_000 },
        origin,
      );
      const { accountId, apiKey } = await t.account(1000);
      const created = await createTask(t, apiKey, bodyD('too large, Picture 1'));
      const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 20_000);
      expect(task).toMatchObject({ state: 'failed', errorCode: 'generation_failed', credits: 0 });
      expect(task.errorMessage).toContain('larger than the 1000000 bytes');
      expect(server.downloads).toBe(1);
      expect(stored(t, task.taskId)).toEqual({ outputs: [], partial: [] });
      expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
      await t.checkLedger(accountId);
    },
  );
});
