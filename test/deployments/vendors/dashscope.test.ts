import { afterEach, describe, expect, it } from 'vitest';
import { createTask } from '../../http/helpers.js';
import { type TestService, waitForTerminal } from '../../support/service.js';
import { DashscopeServer, type DashscopeServerOptions } from '../../../support/upstreams/vendors/dashscope-server.js';
import type { MediaforgeProcess } from '../support.js';
import { deploymentsFile, serveDeployments, taskRow } from './harness.js';
import { eventually } from '../../support/eventually.js';

/**
 * The dashscope profile (spec/providers/dashscope.yaml) against a loopback DashScope
 * (support/upstreams/vendors/dashscope-server.ts): family_c-2.6's text-to-video and image-to-video
 * (720p, 16:9, a shot type, a negative prompt) on Wan.
 */
const TEXT = 'vendor_b/family_c-2.6/text-to-video';
const IMAGE_MODE = 'vendor_b/family_c-2.6/image-to-video';
const KEY = 'sk-dashscope-operator';
const FRAME = 'https://example.com/first.png';

const textTask = (prompt: string, extra: Record<string, unknown> = {}) => ({
  model: TEXT,
  input: { prompt, ...extra },
});

interface Case {
  given: DashscopeServerOptions;
  want: { state: 'succeeded' | 'failed'; reason?: string; firstSubmits: number; secondSubmits: number };
}

const CASES: [string, Case][] = [
  [
    'queued as SUSPENDED (held back by the platform), then run: succeeds',
    { given: { suspendWhileQueued: true }, want: { state: 'succeeded', firstSubmits: 1, secondSubmits: 0 } },
  ],
];

describe("dashscope: DashScope's asynchronous video synthesis through its profile", () => {
  let t: TestService | undefined;
  let proc: MediaforgeProcess | undefined;
  const servers: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await t?.close();
    await proc?.stop();
    [t, proc] = [undefined, undefined];
    for (const server of servers.splice(0)) await server.close();
  });

  async function serve(given: DashscopeServerOptions, settings: { deadlineMs?: number } = {}) {
    const first = await new DashscopeServer({ latencyMs: 300, apiKey: KEY, ...given }).start();
    const second = await new DashscopeServer({ latencyMs: 300, apiKey: KEY }).start();
    servers.push(first, second);
    const routes = [
      { model: TEXT, upstreamModel: 'wan2.6-t2v' },
      { model: IMAGE_MODE, upstreamModel: 'wan2.6-i2v' },
    ];
    t = await serveDeployments(
      deploymentsFile('dashscope', { first: first.url, second: second.url }, routes),
      KEY,
      settings,
    );
    return { first, second, t, ...(await t.account(1000)) };
  }

  it("succeeds: { model, input, parameters } under DashScope's names, X-DashScope-Async, Bearer key; the video downloaded at once, so its link expiring later changes nothing", async () => {
    const { first, t, accountId, apiKey } = await serve({ resultLifetimeMs: 1000 });
    const created = await createTask(
      t,
      apiKey,
      textTask('a lantern festival', { negative_prompt: 'blur', seed: 7, duration_seconds: 4 }),
    );
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    expect(task.state).toBe('succeeded');
    expect(first.submits).toEqual([
      {
        authorization: `Bearer ${KEY}`,
        async: 'enable',
        body: {
          model: 'wan2.6-t2v',
          input: { prompt: 'a lantern festival', negative_prompt: 'blur' },
          parameters: { resolution: '720P', ratio: '16:9', duration: 4, seed: 7, shot_type: 'single' },
        },
      },
    ]);
    const [id] = [...first.tasks.keys()];
    const row = await taskRow(t, task.taskId);
    expect([row.deployment, row.deployment_handle?.includes(id)]).toEqual(['first', true]);
    expect(first.downloads).toBe(1);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await fetch(`${first.url}/oss/${id}.mp4`)).status).toBe(403);
    const media = await fetch(task.output.assets[0].url);
    expect([media.status, media.headers.get('content-type')]).toEqual([200, 'video/mp4']);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: task.credits });
    await t.checkLedger(accountId);
  });

  it('image to video: the frame goes as input.img_url', async () => {
    const { first, t, apiKey } = await serve({});
    const created = await createTask(t, apiKey, {
      model: IMAGE_MODE,
      input: { prompt: 'the lanterns rise', image_url: FRAME },
    });
    expect((await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000)).state).toBe('succeeded');
    expect(first.submits[0].body.input).toEqual({ prompt: 'the lanterns rise', img_url: FRAME });
    expect(first.submits[0].body.model).toBe('wan2.6-i2v');
  });

  it.each(CASES)('%s', async (_name, { given, want }) => {
    const { first, second, t, accountId, apiKey } = await serve(given);
    const created = await createTask(t, apiKey, textTask(`lanterns ${given.failWhenPromptContains ?? ''}`));
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    expect(task.state).toBe(want.state);
    if (want.reason) {
      expect(task.errorCode).toBe('generation_failed');
      expect(task.errorMessage).toContain(want.reason);
    }
    expect([first.submits.length, second.submits.length]).toEqual([want.firstSubmits, want.secondSubmits]);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: want.state === 'succeeded' ? task.credits : 0 });
    if (want.state === 'failed') expect((await taskRow(t, task.taskId)).output_json).toBeNull();
    await t.checkLedger(accountId);
  });

  it('a task DashScope no longer knows (UNKNOWN, unmapped): a protocol failure of each poll, retried; the task expires at its deadline with its hold released', async () => {
    const { first, t, accountId, apiKey } = await serve({ latencyMs: 60_000 }, { deadlineMs: 1500 });
    const created = await createTask(t, apiKey, textTask('a lantern DashScope forgets'));
    await eventually(() => first.polls > 0, 'a poll of the first deployment', 5_000);
    first.tasks.clear();
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    expect(task).toMatchObject({ state: 'expired', errorCode: 'deadline_exceeded', credits: 0 });
    expect(first.submits.length).toBe(1);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
    await t.checkLedger(accountId);
  });
});
