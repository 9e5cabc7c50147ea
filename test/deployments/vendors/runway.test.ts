import { afterEach, describe, expect, it } from 'vitest';
import { createTask } from '../../http/helpers.js';
import { type TestService, waitForTerminal } from '../../support/service.js';
import { RunwayServer, type RunwayServerOptions } from '../../../support/upstreams/vendors/runway-server.js';
import { crash, type MediaforgeProcess, startMediaforge, waitForTask } from '../support.js';
import { bothModels, deploymentsFile, FRAME, imageTask, serveDeployments, taskRow, textTask } from './harness.js';
import { eventually } from '../../support/eventually.js';

const KEY = 'key_runway_operator';
const FLAGGED = 'FLAG-THIS';

describe("runway profile: Runway's API against a loopback Runway", () => {
  let t: TestService | undefined;
  let proc: MediaforgeProcess | undefined;
  const servers: RunwayServer[] = [];
  afterEach(async () => {
    await t?.close();
    await proc?.stop();
    [t, proc] = [undefined, undefined];
    for (const server of servers.splice(0)) await server.close();
  });

  async function serve(
    given: RunwayServerOptions,
    settings: { deadlineMs?: number; pollMs?: number; secondGiven?: RunwayServerOptions } = {},
  ) {
    const first = await new RunwayServer({ latencyMs: 300, apiKey: KEY, ...given }).start();
    const second = await new RunwayServer({ latencyMs: 300, apiKey: KEY, ...settings.secondGiven }).start();
    servers.push(first, second);
    const file = deploymentsFile(
      'runway',
      {
        first: { baseUrl: first.baseUrl, secretEnv: 'RUNWAY_KEY' },
        second: { baseUrl: second.baseUrl, secretEnv: 'RUNWAY_KEY' },
      },
      bothModels('gen4_turbo'),
    );
    t = await serveDeployments(file, { RUNWAY_KEY: KEY }, settings);
    const account = await t.account(1000);
    return { first, second, t, ...account };
  }

  async function run(t: TestService, apiKey: string, body: unknown) {
    const created = await createTask(t, apiKey, body);
    expect(created.status).toBe(202);
    return waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
  }

  it('text to video: POST /v1/text_to_video with Bearer and X-Runway-Version, through THROTTLED and RUNNING to SUCCEEDED; output[0] downloaded', async () => {
    const { first, second, t, accountId, apiKey } = await serve({ latencyMs: 600, queuedMs: 300, throttled: true });
    const task = await run(t, apiKey, textTask('a fox in the snow', { duration_seconds: 6, seed: 7 }));
    expect(task.state).toBe('succeeded');
    const [submit] = first.submits;
    expect(submit.path).toBe('/v1/text_to_video');
    expect(submit.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(submit.headers['x-runway-version']).toBe('2024-11-06');
    expect(submit.body).toEqual({
      model: 'gen4_turbo',
      promptText: 'a fox in the snow',
      ratio: '1280:720',
      duration: 6,
      seed: 7,
    });
    expect(second.submits).toEqual([]);
    const [id] = [...first.jobs.keys()];
    const row = await taskRow(t, task.taskId);
    expect(row.deployment).toBe('first');
    expect(row.deployment_handle).toContain(id);
    // Polled through the queue (THROTTLED) and the run before it ended.
    expect(first.polls).toBeGreaterThan(1);
    expect(first.downloads).toBe(1);
    const [asset] = task.output.assets;
    expect(asset.url.startsWith(`${t.url}/api/v1/media/`)).toBe(true);
    expect((await fetch(asset.url)).headers.get('content-type')).toBe('video/mp4');
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: task.credits });
    expect(task.credits).toBeGreaterThan(0);
    await t.checkLedger(accountId);
  });

  it('image to video: the model of that mode goes to POST /v1/image_to_video with the frame as promptImage (first) and the ratio Runway requires', async () => {
    const { first, t, apiKey } = await serve({});
    const task = await run(t, apiKey, imageTask('the fox turns', { duration_seconds: 5 }));
    expect(task.state).toBe('succeeded');
    expect(first.submits.map((s) => s.path)).toEqual(['/v1/image_to_video']);
    expect(first.submits[0].body).toEqual({
      model: 'gen4_turbo',
      promptText: 'the fox turns',
      promptImage: [{ uri: FRAME, position: 'first' }],
      ratio: '1280:720',
      duration: 5,
    });
  });

  it("image to video with a closing frame: promptImage first and last; a gen4 model refuses the last (400), the task fails with Runway's issue, no failover", async () => {
    const { first, second, t, accountId, apiKey } = await serve({});
    const last = 'https://example.com/last-frame.png';
    const task = await run(t, apiKey, imageTask('the fox turns back', { last_image_url: last }));
    expect(first.submits[0].body.promptImage).toEqual([
      { uri: FRAME, position: 'first' },
      { uri: last, position: 'last' },
    ]);
    expect(task).toMatchObject({ state: 'failed', errorCode: 'generation_failed' });
    expect(task.errorMessage).toContain('Validation of body failed');
    expect(second.submits).toEqual([]);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
  });

  it("FAILED: the task fails with Runway's reason, without the task id; the hold released, no failover", async () => {
    const { first, second, t, accountId, apiKey } = await serve({ failWhenPromptContains: FLAGGED });
    const task = await run(t, apiKey, textTask(`a fox ${FLAGGED}`));
    expect(task).toMatchObject({ state: 'failed', errorCode: 'generation_failed' });
    expect(task.errorMessage).toContain('did not pass our content moderation');
    const [id] = [...first.jobs.keys()];
    expect(task.errorMessage).not.toContain(id);
    expect([first.submits.length, second.submits.length]).toEqual([1, 0]);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
    await t.checkLedger(accountId);
  });

  it("a refused body (400, Runway's issues): fails with Runway's error, never sent elsewhere", async () => {
    const { first, second, t, accountId, apiKey } = await serve({
      submit: () => ({
        status: 400,
        body: { error: 'Validation of body failed', issues: [{ path: ['duration'], message: 'Must be 5 or 10' }] },
      }),
    });
    const task = await run(t, apiKey, textTask('a fox'));
    expect(task).toMatchObject({ state: 'failed', errorCode: 'generation_failed' });
    expect(task.errorMessage).toContain('Validation of body failed');
    expect([first.submits.length, second.submits.length]).toEqual([1, 0]);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
  });

  it('a 200 answer without an id (Runway publishes no error in a 2xx body; a relay might): never read as a job; the task fails with its hold released, nothing polled', async () => {
    const { first, second, t, accountId, apiKey } = await serve({
      submit: () => ({ status: 200, body: { error: 'Service overloaded' } }),
    });
    const task = await run(t, apiKey, textTask('a fox'));
    expect(task.state).toBe('failed');
    expect(first.polls).toBe(0);
    expect((await taskRow(t, task.taskId)).deployment_handle).toBeNull();
    expect(second.submits).toEqual([]);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
    await t.checkLedger(accountId);
  });

  it('429 with Retry-After on the submit: fails over to the second deployment, once', async () => {
    const { first, second, t, apiKey } = await serve({
      submit: () => ({ status: 429, body: { error: 'You have exceeded the rate limit.' }, retryAfter: '30' }),
    });
    const task = await run(t, apiKey, textTask('a fox'));
    expect(task.state).toBe('succeeded');
    expect([first.submits.length, second.submits.length]).toEqual([1, 1]);
    expect((await taskRow(t, task.taskId)).deployment).toBe('second');
  });

  it("429 with Retry-After on the only deployment's submit: the task is submitted again, not before Retry-After", async () => {
    const { first, second, t, apiKey } = await serve(
      { submit: (i) => (i === 0 ? { status: 429, body: { error: 'Rate limited' }, retryAfter: '1' } : undefined) },
      { secondGiven: { submit: () => ({ status: 503, body: { error: 'Service unavailable' } }) } },
    );
    const task = await run(t, apiKey, textTask('a patient fox'));
    expect(task.state).toBe('succeeded');
    expect(first.submits.length).toBe(2);
    expect(second.submits.length).toBe(1);
    expect(first.submitTimes[1] - first.submitTimes[0]).toBeGreaterThanOrEqual(1000);
  });

  it('the key refused (401): fails over to the second deployment', async () => {
    const { first, second, t, apiKey } = await serve({ apiKey: 'another-key' });
    const task = await run(t, apiKey, textTask('a fox'));
    expect(task.state).toBe('succeeded');
    expect([first.submits.length, second.submits.length]).toEqual([1, 1]);
  });

  it('at the deadline the task is cancelled at Runway (DELETE /v1/tasks/{id}), the task expires and its hold is released', async () => {
    const { first, t, accountId, apiKey } = await serve({ latencyMs: 60_000 }, { deadlineMs: 1500 });
    const task = await run(t, apiKey, textTask('a long one'));
    expect(task).toMatchObject({ state: 'expired', errorCode: 'deadline_exceeded', credits: 0 });
    await eventually(() => first.cancels.length > 0, "the cancel of the first deployment's job", 5_000);
    expect(first.cancels).toEqual([...first.jobs.keys()]);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
    await t.checkLedger(accountId);
  });

  it('CANCELLED at Runway without the service asking: the task fails, the provider canceled it, hold released', async () => {
    const { first, t, accountId, apiKey } = await serve({ latencyMs: 5000, queuedMs: 100, cancelledByRunway: true });
    const task = await run(t, apiKey, textTask('a fox cancelled elsewhere'));
    expect(task.state).toBe('failed');
    expect(task.errorMessage).toMatch(/provider canceled the generation/i);
    expect(first.cancels).toEqual([]);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
    await t.checkLedger(accountId);
  });

  it('an output link already expired when fetched: fails with the hold released, nothing kept', async () => {
    const { t, accountId, apiKey } = await serve({ outputLifetimeMs: 0 });
    const task = await run(t, apiKey, textTask('a fox'));
    expect(task).toMatchObject({ state: 'failed', errorCode: 'internal_error' });
    expect((await taskRow(t, task.taskId)).output_json).toBeNull();
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
  });

  it('SIGKILL of the service mid-poll: the restarted service resumes the Runway task on the same deployment, created once', async () => {
    const runway = await new RunwayServer({ latencyMs: 4000, apiKey: KEY }).start();
    servers.push(runway);
    const file = deploymentsFile(
      'runway',
      {
        rw: { baseUrl: runway.baseUrl, secretEnv: 'RUNWAY_KEY' },
      },
      bothModels('gen4_turbo'),
    );
    proc = await startMediaforge(
      'runway',
      {
        MEDIAFORGE_DEPLOYMENTS: '$DIR/deployments.yaml',
        RUNWAY_KEY: KEY,
        MEDIAFORGE_UPSTREAM_POLL_MS: '200',
        MEDIAFORGE_LEASE_MS: '1500',
      },
      { 'deployments.yaml': file },
    );
    const { apiKey } = await proc.account(1000);
    const created = await fetch(`${proc.url}/api/v1/jobs/createTask`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(textTask('restart')),
    }).then((r) => r.json());
    const taskId = created.data.taskId as string;
    await waitForTask(proc.url, apiKey, taskId, (r) => r.state === 'running' && r.progress > 0);
    const pinned = await proc.db.kysely
      .selectFrom('tasks')
      .select(['deployment', 'deployment_handle'])
      .where('id', '=', taskId)
      .executeTakeFirstOrThrow();
    await crash(proc);
    const pollsBefore = runway.polls;
    await proc.restart();
    const task = await waitForTask(proc.url, apiKey, taskId);
    expect(task.state).toBe('succeeded');
    expect(runway.submits.length).toBe(1);
    expect(runway.polls).toBeGreaterThan(pollsBefore);
    expect(runway.downloads).toBe(1);
    const row = await proc.db.kysely
      .selectFrom('tasks')
      .select(['deployment', 'deployment_handle'])
      .where('id', '=', taskId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual(pinned);
  }, 60_000);
});
