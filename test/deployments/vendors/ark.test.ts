import { afterEach, describe, expect, it } from 'vitest';
import { createTask } from '../../http/helpers.js';
import { type TestService, waitForTerminal } from '../../support/service.js';
import { ArkServer, type ArkServerOptions } from '../../../support/upstreams/vendors/ark-server.js';
import type { MediaforgeProcess } from '../support.js';
import { deploymentsFile, serveDeployments, taskRow } from './harness.js';

/**
 * The ark profile (spec/providers/ark.yaml) against a loopback Ark
 * (support/upstreams/vendors/ark-server.ts): family_a 2.0's reference-to-video and image-to-video
 * (content[] of typed items) on Seedance.
 */
const REFERENCE = 'vendor_a/family_a-2.0/reference-to-video';
const IMAGE_MODE = 'vendor_a/family_a-2.0/image-to-video';
const UPSTREAM_MODEL = 'dreamina-seedance-2-0-260128';
const KEY = 'ark-operator-key';
const PICTURE_1 = 'https://example.com/one.png';
const PICTURE_2 = 'https://example.com/two.png';
const FIRST = 'https://example.com/first.png';
const LAST = 'https://example.com/last.png';

const referenceTask = (prompt: string) => ({
  model: REFERENCE,
  input: { prompt, reference_image_urls: [PICTURE_1, PICTURE_2] },
});

describe("ark: Ark's content generation tasks through its profile", () => {
  let t: TestService | undefined;
  let proc: MediaforgeProcess | undefined;
  const servers: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await t?.close();
    await proc?.stop();
    [t, proc] = [undefined, undefined];
    for (const server of servers.splice(0)) await server.close();
  });

  async function serve(given: ArkServerOptions, settings: { deadlineMs?: number } = {}) {
    const first = await new ArkServer({ latencyMs: 300, apiKey: KEY, ...given }).start();
    const second = await new ArkServer({ latencyMs: 300, apiKey: KEY }).start();
    servers.push(first, second);
    const routes = [REFERENCE, IMAGE_MODE].map((model) => ({ model, upstreamModel: UPSTREAM_MODEL }));
    t = await serveDeployments(deploymentsFile('ark', { first: first.url, second: second.url }, routes), KEY, settings);
    return { first, second, t, ...(await t.account(1000)) };
  }

  it("succeeds: content[] of a text item and one reference_image item per picture, Ark's names, an execution_expires_after Ark accepts; the video downloaded at once, so its link expiring later changes nothing", async () => {
    const { first, t, accountId, apiKey } = await serve({ resultLifetimeMs: 1000 });
    const created = await createTask(t, apiKey, referenceTask('two dancers, Picture 1 and Picture 2'));
    const task = await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000);
    expect(task.state).toBe('succeeded');
    expect(first.submits).toEqual([
      {
        authorization: `Bearer ${KEY}`,
        body: {
          model: UPSTREAM_MODEL,
          content: [
            { type: 'text', text: 'two dancers, Picture 1 and Picture 2' },
            { type: 'image_url', image_url: { url: PICTURE_1 }, role: 'reference_image' },
            { type: 'image_url', image_url: { url: PICTURE_2 }, role: 'reference_image' },
          ],
          ratio: 'adaptive',
          resolution: '720p',
          duration: 5,
          generate_audio: true,
          watermark: false,
          return_last_frame: false,
          // The task has far less than an hour to its deadline; Ark takes no less than an hour.
          execution_expires_after: 3600,
        },
      },
    ]);
    const [id] = [...first.tasks.keys()];
    const row = await taskRow(t, task.taskId);
    expect([row.deployment, row.deployment_handle?.includes(id)]).toEqual(['first', true]);
    expect(first.downloads).toBe(1);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await fetch(`${first.url}/tos/${id}.mp4`)).status).toBe(403);
    const media = await fetch(task.output.assets[0].url);
    expect([media.status, media.headers.get('content-type')]).toEqual([200, 'video/mp4']);
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: task.credits });
    await t.checkLedger(accountId);
  });

  it('image to video: the opening and closing frames as image_url items with role first_frame and last_frame', async () => {
    const { first, t, apiKey } = await serve({});
    const created = await createTask(t, apiKey, {
      model: IMAGE_MODE,
      input: { prompt: 'from dawn to dusk', image_url: FIRST, last_image_url: LAST },
    });
    expect((await waitForTerminal(t, apiKey, created.body.data.taskId, 15_000)).state).toBe('succeeded');
    expect(first.submits[0].body.content).toEqual([
      { type: 'text', text: 'from dawn to dusk' },
      { type: 'image_url', image_url: { url: FIRST }, role: 'first_frame' },
      { type: 'image_url', image_url: { url: LAST }, role: 'last_frame' },
    ]);
  });
});
