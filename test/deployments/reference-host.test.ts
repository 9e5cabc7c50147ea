import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDeployments } from '../../runtime/routing/deployments-file.js';
import { sniff } from '../../runtime/files/probe.js';
import { ReferenceHost } from '../../support/media/reference-host.js';
import { JobsProtocolServer } from '../../support/upstreams/jobs-protocol-server.js';
import { createTask, expectOk } from '../http/helpers.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';
import { png } from '../../support/media/fixtures.js';

/**
 * The loopback reference host (support/media/reference-host.ts) that suites use instead of
 * `https://example.com/...` references once references are fetched whole (issue 37 point 3): its
 * media are real files the service measures, a test can swap what a path serves, and it counts
 * fetches. Tests may name models; the runtime may not.
 */
const MODEL = 'vendor_b/family_c-2.6/reference-to-video';

describe('the loopback reference host', () => {
  let host: ReferenceHost;
  beforeAll(async () => {
    host = await new ReferenceHost().start();
  });
  afterAll(async () => {
    await host.close();
  });

  it.each([
    ['/image.png', { want: { kind: 'image', format: 'png' } }],
    ['/image.jpg', { want: { kind: 'image', format: 'jpeg' } }],
    ['/video.mp4', { want: { kind: 'video', format: 'mp4' } }],
    ['/audio.wav', { want: { kind: 'audio', format: 'wav' } }],
  ] as const)('serves %s as real media', async (path, { want }) => {
    const answer = await fetch(host.urlOf(path));
    expect(answer.status).toBe(200);
    const sniffed = await sniff(new Uint8Array(await answer.arrayBuffer()));
    expect(sniffed).toMatchObject(want);
  });

  it('serves the swapped bytes after a swap, 404 for a path it does not host, and counts GETs', async () => {
    const other = png(8, 8, true);
    const before = host.fetchCount('/swapped.png');
    host.serve('/swapped.png', png(4, 4, false), 'image/png');
    host.serve('/swapped.png', other, 'image/png');
    const answer = await fetch(host.urlOf('/swapped.png'));
    expect(Buffer.from(await answer.arrayBuffer()).equals(other)).toBe(true);
    expect(host.fetchCount('/swapped.png')).toBe(before + 1);
    expect((await fetch(host.urlOf('/missing.png'))).status).toBe(404);
  });
});

describe('a reference on the host is fetched and measured by the check lane', () => {
  let t: TestService | undefined;
  let host: ReferenceHost;
  let upstream: JobsProtocolServer;
  beforeAll(async () => {
    host = await new ReferenceHost().start();
    upstream = await new JobsProtocolServer({ latencyMs: 100, apiKey: 'up-key' }).start();
    const plan = parseDeployments(
      'deployments.yaml',
      [
        'upstreams:',
        `  up: { kind: jobs, baseUrl: "${upstream.baseUrl}", secretEnv: UP_KEY }`,
        'models:',
        `  ${MODEL}:`,
        '    - upstream: up',
      ].join('\n'),
      { UP_KEY: 'up-key' },
    );
    t = await startTestService(
      { upstreamPollMs: 50, webhookAllowPrivate: true, webhookAllowInsecure: true },
      { deploymentsPlan: plan },
    );
  });
  afterAll(async () => {
    await t?.close();
    await upstream.close();
    await host.close();
  });

  it('a task referencing the host video succeeds and the host was read', async () => {
    const { apiKey } = await t!.account(100_000);
    const created = await createTask(t!, apiKey, {
      model: MODEL,
      input: {
        prompt: 'the character from the clip waves',
        duration_seconds: 2,
        resolution: '720p',
        reference_video_urls: [host.urlOf('/video.mp4')],
      },
    });
    expectOk(created, 202);
    const task = await waitForTerminal(t!, apiKey, created.body.data.taskId, 20_000);
    expect(task.state, JSON.stringify(task)).toBe('succeeded');
    expect(host.fetchCount('/video.mp4')).toBeGreaterThan(0);
  });
});
