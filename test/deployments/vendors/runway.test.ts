import { afterEach, describe, expect, it } from 'vitest';
import { createTask } from '../../http/helpers.js';
import { type TestService, waitForTerminal } from '../../support/service.js';
import { RunwayServer, type RunwayServerOptions } from '../../../support/upstreams/vendors/runway-server.js';
import type { MediaforgeProcess } from '../support.js';
import { bothModels, deploymentsFile, FRAME, imageTask, serveDeployments, taskRow, textTask } from './harness.js';

const KEY = 'key_runway_operator';

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
});
