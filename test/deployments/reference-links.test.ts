// @store-suite: the check lane stores each reference in the media store, and the provider reads it back through the media route (local and S3 stores).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDeployments } from '../../runtime/routing/deployments-file.js';
import { probeBytes } from '../../runtime/files/probe.js';
import { clip, png } from '../../support/media/fixtures.js';
import { ReferenceHost } from '../../support/media/reference-host.js';
import { JobsProtocolServer } from '../../support/upstreams/jobs-protocol-server.js';
import { createTask, expectOk } from '../http/helpers.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';
import { modelsSection } from '../support/deployments-yaml.js';

/**
 * Issue 37 point 3: providers fetch what was measured. A task's external references reach an
 * upstream as the service's own signed links to the copies the check lane fetched whole and
 * measured, so what the customer's host serves after the check (a swap) changes neither what the
 * provider reads nor what is billed; an upstream whose file says `references: original` gets the
 * customer's URLs; the copies go with the task's purge. Tests may name models; the runtime may not.
 */
const MODEL = 'vendor_b/family_c-2.6/reference-to-video';
/** A second model routed to the upstream that takes the customer's URLs. */
const ORIGINAL_MODEL = 'vendor_b/family_c-2.6/image-to-video';
const METRICS_TOKEN = 'metrics-token-of-the-reference-suite';

/** A 2 s 720p task of MODEL on these references. */
const clipTask = (prompt: string, references: Record<string, string[]>) => ({
  model: MODEL,
  input: { prompt, duration_seconds: 2, resolution: '720p', ...references },
});

describe('references reach the provider as the bytes the service measured', () => {
  let t: TestService | undefined;
  let host: ReferenceHost;
  let stored: JobsProtocolServer;
  let original: JobsProtocolServer;
  beforeAll(async () => {
    host = await new ReferenceHost().start();
    stored = await new JobsProtocolServer({ latencyMs: 100, apiKey: 'up-key', fetchReferences: true }).start();
    original = await new JobsProtocolServer({ latencyMs: 100, apiKey: 'up-key' }).start();
    const plan = parseDeployments(
      'deployments.yaml',
      [
        'upstreams:',
        `  stored: { kind: jobs, baseUrl: "${stored.baseUrl}", secretEnv: UP_KEY }`,
        `  original: { kind: jobs, baseUrl: "${original.baseUrl}", secretEnv: UP_KEY, references: original }`,
        ...modelsSection({ [MODEL]: 'stored', [ORIGINAL_MODEL]: 'original' }),
      ].join('\n'),
      { UP_KEY: 'up-key' },
    );
    t = await startTestService(
      { upstreamPollMs: 50, webhookAllowPrivate: true, webhookAllowInsecure: true, metricsToken: METRICS_TOKEN },
      { deploymentsPlan: plan },
    );
  });
  afterAll(async () => {
    await t?.close();
    await stored.close();
    await original.close();
    await host.close();
  });

  /** The operator's count of stored copies and their bytes (/metrics). */
  async function copiesMetric(): Promise<{ copies: number; bytes: number }> {
    const r = await t!.call('GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    const read = (measure: string) =>
      Number(new RegExp(`^mediaforge_reference_copies\\{measure="${measure}"\\} (\\d+)$`, 'm').exec(r.body)?.[1]);
    return { copies: read('copies'), bytes: read('bytes') };
  }

  /** The input the upstream received for a task (the service's job of it). */
  function receivedInput(server: JobsProtocolServer, prompt: string): Record<string, unknown> {
    const job = [...server.jobs.values()].find((j) => j.prompt === prompt);
    expect(job, `the upstream received no job for "${prompt}"`).toBeDefined();
    return job!.input;
  }

  it('sends signed links to the stored copies, which keep the measured bytes after the host swaps them; the bill follows the measured clip', async () => {
    const { apiKey } = await t!.account(100_000);
    const two = clip(2);
    host.serve('/swap/clip.mp4', two, 'video/mp4');
    host.serve('/swap/frame.png', png(64, 64, false), 'image/png');
    const prompt = 'the character from the clip waves ~stored~';
    const created = await createTask(
      t!,
      apiKey,
      clipTask(prompt, {
        reference_video_urls: [host.urlOf('/swap/clip.mp4')],
        reference_image_urls: [host.urlOf('/swap/frame.png')],
      }),
    );
    expectOk(created, 202);
    const taskId = created.body.data.taskId;
    const task = await waitForTerminal(t!, apiKey, taskId, 20_000);
    expect(task.state, JSON.stringify(task)).toBe('succeeded');

    // The host was read once per reference: by the check, never by the provider.
    expect(host.fetchCount('/swap/clip.mp4')).toBe(1);
    expect(host.fetchCount('/swap/frame.png')).toBe(1);
    const input = receivedInput(stored, prompt);
    const [videoLink] = input.reference_video_urls as string[];
    const [imageLink] = input.reference_image_urls as string[];
    for (const link of [videoLink, imageLink]) {
      expect(link.startsWith(`${t!.config.publicUrl}/api/v1/media/`), link).toBe(true);
      expect(decodeURIComponent(new URL(link).pathname)).toContain(`/references/${taskId}/`);
      expect(link).not.toContain(host.url);
    }
    // The provider read its link (the server's fetchReferences), and the job did not fail on it.
    expect([...stored.jobs.values()].find((j) => j.prompt === prompt)?.unreadableReference).toBe(false);

    // The customer's host now serves other bytes: the provider's link still gives the measured ones.
    host.serve('/swap/clip.mp4', clip(4), 'video/mp4');
    const copy = await fetch(videoLink);
    expect(copy.status).toBe(200);
    expect(copy.headers.get('content-type')).toBe('video/mp4');
    const bytes = Buffer.from(await copy.arrayBuffer());
    expect(bytes.equals(two)).toBe(true);
    expect((await probeBytes(bytes))?.durationSeconds).toBeCloseTo(2, 0);
    const image = await fetch(imageLink);
    expect(image.headers.get('content-type')).toBe('image/png');

    // The bill is the measured clip: the same request made now, while the host serves a 4 s clip, costs more.
    const again = await createTask(
      t!,
      apiKey,
      clipTask(`${prompt} again`, { reference_video_urls: [host.urlOf('/swap/clip.mp4')] }),
    );
    expectOk(again, 202);
    const later = await waitForTerminal(t!, apiKey, again.body.data.taskId, 20_000);
    expect(later.state, JSON.stringify(later)).toBe('succeeded');
    expect(later.credits).toBeGreaterThan(task.credits);
  });

  it('sends the customer URLs unchanged to an upstream that says references: original', async () => {
    const { apiKey } = await t!.account(100_000);
    const prompt = 'a lighthouse at dusk ~original~';
    const url = host.urlOf('/image.png');
    const created = await createTask(t!, apiKey, {
      model: ORIGINAL_MODEL,
      input: { prompt, image_url: url, duration_seconds: 5, resolution: '720p' },
    });
    expectOk(created, 202);
    const task = await waitForTerminal(t!, apiKey, created.body.data.taskId, 20_000);
    expect(task.state, JSON.stringify(task)).toBe('succeeded');
    expect(receivedInput(original, prompt).image_url).toBe(url);
  });

  it('deletes the copies with the task purge: the link the provider had answers 404', async () => {
    const { apiKey } = await t!.account(100_000);
    const prompt = 'the character from the clip bows ~purged~';
    const created = await createTask(
      t!,
      apiKey,
      clipTask(prompt, { reference_video_urls: [host.urlOf('/video.mp4')] }),
    );
    expectOk(created, 202);
    const taskId = created.body.data.taskId;
    expect((await waitForTerminal(t!, apiKey, taskId, 20_000)).state).toBe('succeeded');
    const [link] = receivedInput(stored, prompt).reference_video_urls as string[];
    const copy = await fetch(link);
    expect(copy.status).toBe(200);
    const copyBytes = (await copy.arrayBuffer()).byteLength;
    const before = await copiesMetric();
    expect(before.copies).toBeGreaterThan(0);
    expect(before.bytes).toBeGreaterThanOrEqual(copyBytes);
    const purged = await fetch(`${t!.url}/api/v1/jobs/purge`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ taskId }),
    });
    expect(purged.status).toBe(200);
    expect((await fetch(link)).status).toBe(404);
    // Counted while kept, and no longer once purged.
    expect(await copiesMetric()).toEqual({ copies: before.copies - 1, bytes: before.bytes - copyBytes });
  });
});
