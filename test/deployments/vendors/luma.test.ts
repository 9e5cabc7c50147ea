import { afterEach, describe, expect, it } from 'vitest';
import { createTask } from '../../http/helpers.js';
import { type TestService, waitForTerminal } from '../../support/service.js';
import { LumaServer, type LumaServerOptions } from '../../../support/upstreams/vendors/luma-server.js';
import type { MediaforgeProcess } from '../support.js';
import { bothModels, deploymentsFile, FRAME, imageTask, serveDeployments, taskRow, textTask } from './harness.js';

const KEY = 'luma-operator-key';

describe("luma profile: Luma's Dream Machine API against a loopback Luma", () => {
  let t: TestService | undefined;
  let proc: MediaforgeProcess | undefined;
  const servers: LumaServer[] = [];
  afterEach(async () => {
    await t?.close();
    await proc?.stop();
    [t, proc] = [undefined, undefined];
    for (const server of servers.splice(0)) await server.close();
  });

  async function serve(
    given: LumaServerOptions,
    settings: { deadlineMs?: number; pollMs?: number; secondGiven?: LumaServerOptions } = {},
  ) {
    const first = await new LumaServer({ latencyMs: 300, apiKey: KEY, ...given }).start();
    const second = await new LumaServer({ latencyMs: 300, apiKey: KEY, ...settings.secondGiven }).start();
    servers.push(first, second);
    const file = deploymentsFile(
      'luma',
      {
        first: { baseUrl: first.baseUrl, secretEnv: 'LUMA_KEY' },
        second: { baseUrl: second.baseUrl, secretEnv: 'LUMA_KEY' },
      },
      bothModels('ray-2'),
    );
    t = await serveDeployments(file, { LUMA_KEY: KEY }, settings);
    const account = await t.account(1000);
    return { first, second, t, ...account };
  }

  async function run(t: TestService, apiKey: string, body: unknown) {
    const created = await createTask(t, apiKey, body);
    expect(created.status).toBe(202);
    return waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
  }

  it("text to video: POST /dream-machine/v1/generations/video in Luma's names, through queued and dreaming to completed; assets.video downloaded", async () => {
    const { first, second, t, accountId, apiKey } = await serve({ latencyMs: 600, queuedMs: 300 });
    const task = await run(t, apiKey, textTask('a fox in the snow', { aspect_ratio: '9:16', duration_seconds: 5 }));
    expect(task.state).toBe('succeeded');
    const [submit] = first.submits;
    expect(submit.path).toBe('/dream-machine/v1/generations/video');
    expect(submit.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(submit.body).toEqual({
      model: 'ray-2',
      prompt: 'a fox in the snow',
      aspect_ratio: '9:16',
      resolution: '720p',
      duration: '5s',
    });
    expect(second.submits).toEqual([]);
    const [id] = [...first.jobs.keys()];
    const row = await taskRow(t, task.taskId);
    expect(row.deployment).toBe('first');
    expect(row.deployment_handle).toContain(id);
    expect(first.polls).toBeGreaterThan(1);
    expect(first.downloads).toBe(1);
    const [asset] = task.output.assets;
    expect(asset.url.startsWith(`${t.url}/api/v1/media/`)).toBe(true);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: task.credits });
    expect(task.credits).toBeGreaterThan(0);
    await t.checkLedger(accountId);
  });

  it("image to video: the opening frame is Luma's keyframes.frame0, and no frame1 without a closing frame", async () => {
    const { first, t, apiKey } = await serve({});
    const task = await run(t, apiKey, imageTask('the fox turns'));
    expect(task.state).toBe('succeeded');
    expect(first.submits[0].body.keyframes).toEqual({ frame0: { type: 'image', url: FRAME } });
  });

  it('image to video with a closing frame: keyframes frame0 and frame1', async () => {
    const { first, t, apiKey } = await serve({});
    const last = 'https://example.com/last-frame.png';
    const task = await run(t, apiKey, imageTask('the fox turns', { last_image_url: last }));
    expect(task.state).toBe('succeeded');
    expect(first.submits[0].body.keyframes).toEqual({
      frame0: { type: 'image', url: FRAME },
      frame1: { type: 'image', url: last },
    });
  });
});
