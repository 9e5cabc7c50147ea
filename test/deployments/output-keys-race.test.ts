import { afterEach, describe, expect, it } from 'vitest';
import { askedClip } from '../../support/media/fixtures.js';
import { JobsProtocolServer } from '../../support/upstreams/jobs-protocol-server.js';
import { drip } from '../../support/upstreams/slow-results.js';
import { modelsSection } from '../support/deployments-yaml.js';
import { spawnServer, type ServerProcess } from '../reliability/support.js';
import { call, type MediaforgeProcess, startMediaforge, waitForTask } from './support.js';

/**
 * Issue 37, point 10: output keys are per claim, so a lost lease's cleanup cannot delete another
 * worker's output. Two `mediaforge serve` processes on one database and one store: worker A
 * stores the task's video, and while it streams the last frame it is stopped (SIGSTOP), so its
 * lease of the poll item runs out; worker B takes the item over, stores both outputs and settles
 * the task; then A runs again, learns its lease is lost, and cleans up what it stored. The task's
 * media must still be served whole. With output keys per task (A and B writing the same key),
 * A's cleanup deletes B's video and this test fails (tried: see docs/reliability.md).
 */
const MODEL = 'vendor_a/family_a-2.0-fast/text-to-video';
const LEASE_MS = 1500;

describe("a lost lease's cleanup does not touch the output of the worker that took the item over", () => {
  let upstream: JobsProtocolServer | undefined;
  let a: MediaforgeProcess | undefined;
  let b: ServerProcess | undefined;
  afterEach(async () => {
    if (a && a.server.child.exitCode === null) a.server.child.kill('SIGCONT');
    if (b && b.child.exitCode === null && b.child.signalCode === null) {
      b.child.kill('SIGTERM');
      await b.exited;
    }
    await a?.stop();
    await upstream?.close();
    [a, b, upstream] = [undefined, undefined, undefined];
  });

  async function until(what: string, condition: () => boolean, timeoutMs = 20_000): Promise<void> {
    for (const end = Date.now() + timeoutMs; !condition(); ) {
      if (Date.now() > end) throw new Error(`not within ${timeoutMs} ms: ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  it('worker A loses its lease mid-stream, worker B completes the task, then A cleans up: the video and the last frame are served whole', async () => {
    const videos: Buffer[] = [];
    upstream = await new JobsProtocolServer({
      latencyMs: 100,
      lastFrameAsset: true,
      result: (job) => {
        const clip = askedClip(job.model!, job.input, Math.min(60, job.seconds));
        videos.push(clip);
        return clip;
      },
      // The first last frame (worker A's) drips for a minute: A is mid-stream when it is stopped.
      lastFrame: (frame, download) => (download === 2 ? drip(frame, 60_000) : frame),
    }).start();
    const deployments = [
      'upstreams:',
      `  up: { kind: jobs, baseUrl: "${upstream.baseUrl}" }`,
      ...modelsSection({ [MODEL]: 'up' }),
    ].join('\n');
    a = await startMediaforge(
      'output-keys-race',
      {
        MEDIAFORGE_DEPLOYMENTS: '$DIR/deployments.yaml',
        MEDIAFORGE_UPSTREAM_POLL_MS: '50',
        MEDIAFORGE_LEASE_MS: String(LEASE_MS),
      },
      { 'deployments.yaml': deployments },
    );
    const { apiKey } = await a.account(1000);
    const created = await call(a.url, 'POST', '/api/v1/jobs/createTask', apiKey, {
      model: MODEL,
      input: { prompt: 'a lighthouse at dusk', return_last_frame: true, duration_seconds: 5 },
    });
    expect(created.status).toBe(202);
    const taskId = created.body.data.taskId as string;

    // A stored the video and streams the last frame: stop it there, its lease left to run out.
    await until("worker A's last frame is open", () => upstream!.results.open === 1);
    expect(upstream.downloads).toBe(2);
    a.server.child.kill('SIGSTOP');

    // B, on the same database and store, takes the poll item over once the lease ran out, and settles the task.
    b = await spawnServer(a.env);
    const done = await waitForTask(b.url, apiKey, taskId, undefined, 30_000);
    expect(done.state).toBe('succeeded');
    expect(upstream.downloads).toBe(4);

    // A runs again: its lease is lost, its download cut, and what it stored is cleaned up.
    a.server.child.kill('SIGCONT');
    await until("worker A's aborted poll item", () => /work item aborted/.test(a!.server.output()));
    await until("worker A's last frame cut", () => upstream!.results.cut === 1);
    expect(upstream.results).toMatchObject({ open: 0, completed: 0, cut: 1 });

    // The task's media, as a client fetches it: whole, byte for byte what the provider sent.
    const record = await waitForTask(b.url, apiKey, taskId);
    const assets = record.output.assets as { url: string; mime: string }[];
    expect(assets.map((asset) => asset.mime)).toEqual(['video/mp4', 'image/png']);
    const bodies = await Promise.all(
      assets.map(async (asset) => {
        const url = new URL(asset.url, b!.url);
        const answer = await fetch(new URL(`${url.pathname}${url.search}`, b!.url));
        return { status: answer.status, bytes: Buffer.from(await answer.arrayBuffer()) };
      }),
    );
    expect(bodies.map((body) => body.status)).toEqual([200, 200]);
    expect(bodies[0].bytes.equals(videos.at(-1)!)).toBe(true);
    expect(bodies[1].bytes.length).toBeGreaterThan(0);
  }, 90_000);
});
