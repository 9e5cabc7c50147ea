import { afterEach, describe, expect, it } from 'vitest';
import { createTask } from '../../http/helpers.js';
import type { Special } from '../../../support/upstreams/loopback-upstream.js';
import {
  MinimaxServer,
  type MinimaxServerOptions,
  minimaxRefusal,
} from '../../../support/upstreams/vendors/minimax-server.js';
import { type TestService, waitForTerminal } from '../../support/service.js';
import type { MediaforgeProcess } from '../support.js';
import { deploymentsFile, serveDeployments, taskRow } from './harness.js';

/**
 * The minimax profile (spec/providers/minimax.yaml) against a loopback MiniMax
 * (support/upstreams/vendors/minimax-server.ts): family_d's text-to-video and image-to-video (768p,
 * which MiniMax calls 768P) on MiniMax-Hailuo-02, which makes 6 or 10 s.
 */
const TEXT = 'vendor_d/family_d/text-to-video';
const IMAGE_MODE = 'vendor_d/family_d/image-to-video';
const UPSTREAM_MODEL = 'MiniMax-Hailuo-02';
const KEY = 'mm-operator-key';
const FRAME = 'https://example.com/first.png';

const textTask = (prompt: string) => ({ model: TEXT, input: { prompt, duration_seconds: 6 } });

interface Case {
  given: MinimaxServerOptions;
  want: { state: 'succeeded' | 'failed'; reason?: string; firstSubmits: number; secondSubmits: number };
}

const once =
  (special: Special) =>
  (index: number): Special =>
    index === 0 ? special : undefined;

const CASES: [string, Case][] = [
  [
    "a 200 answer whose base_resp says insufficient balance (1008): the operator's account, the second deployment takes the task",
    {
      given: { submit: once(minimaxRefusal(1008, 'insufficient balance')) },
      want: { state: 'succeeded', firstSubmits: 1, secondSubmits: 1 },
    },
  ],
];

describe("minimax: MiniMax's video generation API through its profile", () => {
  let t: TestService | undefined;
  let proc: MediaforgeProcess | undefined;
  const servers: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await t?.close();
    await proc?.stop();
    [t, proc] = [undefined, undefined];
    for (const server of servers.splice(0)) await server.close();
  });

  async function serve(given: MinimaxServerOptions, settings: { deadlineMs?: number } = {}) {
    const first = await new MinimaxServer({ latencyMs: 300, apiKey: KEY, ...given }).start();
    const second = await new MinimaxServer({ latencyMs: 300, apiKey: KEY }).start();
    servers.push(first, second);
    const routes = [TEXT, IMAGE_MODE].map((model) => ({ model, upstreamModel: UPSTREAM_MODEL }));
    t = await serveDeployments(
      deploymentsFile('minimax', { first: first.url, second: second.url }, routes),
      KEY,
      settings,
    );
    return { first, second, t, ...(await t.account(1000)) };
  }

  it("succeeds: MiniMax's names, Bearer key, the file_id turned into its link by files/retrieve, the file downloaded at once (its link expiring later changes nothing)", async () => {
    const { first, t, accountId, apiKey } = await serve({ resultLifetimeMs: 1000 });
    const created = await createTask(t, apiKey, textTask('a heron over a lake'));
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    expect(task.state).toBe('succeeded');
    expect(first.submits).toEqual([
      {
        authorization: `Bearer ${KEY}`,
        body: {
          model: UPSTREAM_MODEL,
          prompt: 'a heron over a lake',
          duration: 6,
          resolution: '768P',
          prompt_optimizer: false,
        },
      },
    ]);
    expect([first.retrieves, first.downloads]).toEqual([1, 1]);
    const [taskId] = [...first.tasks.keys()];
    const row = await taskRow(t, task.taskId);
    expect([row.deployment, row.deployment_handle?.includes(taskId)]).toEqual(['first', true]);
    const [asset] = task.output.assets;
    expect(asset.url.startsWith(`${t.url}/api/v1/media/`)).toBe(true);
    await new Promise((r) => setTimeout(r, 1100));
    const fileId = first.tasks.get(taskId)!.fileId;
    expect((await fetch(`${first.url}/download/${fileId}.mp4`)).status).toBe(403);
    const media = await fetch(asset.url);
    expect([media.status, media.headers.get('content-type')]).toEqual([200, 'video/mp4']);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: task.credits });
    await t.checkLedger(accountId);
  });

  it('image to video: the frame goes as first_frame_image', async () => {
    const { first, t, apiKey } = await serve({});
    const created = await createTask(t, apiKey, {
      model: IMAGE_MODE,
      input: { prompt: 'the heron takes off', image_url: FRAME, duration_seconds: 10 },
    });
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    expect(task.state).toBe('succeeded');
    expect(first.submits[0].body).toEqual({
      model: UPSTREAM_MODEL,
      prompt: 'the heron takes off',
      first_frame_image: FRAME,
      duration: 10,
      resolution: '768P',
      prompt_optimizer: false,
    });
  });

  it.each(CASES)('%s', async (_name, { given, want }) => {
    const { first, second, t, accountId, apiKey } = await serve(given);
    const created = await createTask(t, apiKey, textTask(`a heron ${given.failWhenPromptContains ?? ''}`));
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

  it('a status value the profile does not map (Rendering): each such poll is a protocol failure, retried; the task expires at its deadline with its hold released', async () => {
    const { first, t, accountId, apiKey } = await serve(
      { latencyMs: 60_000, queuedShare: 0, runningStatus: 'Rendering' },
      { deadlineMs: 1500 },
    );
    const created = await createTask(t, apiKey, textTask('a heron in a new state'));
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    expect(task).toMatchObject({ state: 'expired', errorCode: 'deadline_exceeded', credits: 0 });
    expect(first.polls).toBeGreaterThan(0);
    expect(first.submits.length).toBe(1);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
    await t.checkLedger(accountId);
  });
});
