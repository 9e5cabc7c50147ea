// @store-suite: the compatible layer's content is read from the store (vitest.config.ts runs it on the local and the S3 store).
import { describe, expect, it } from 'vitest';
import type { TestService } from '../support/service.js';
import { serviceForSuite } from '../support/suite-service.js';

/**
 * Issue 21 item 7: a running task shows the deployment's progress, not 0 until it jumps to 100.
 * With a simulator latency of 1.5 s, a task read while it runs (the compatible layer's Video and
 * recordInfo) shows a progress strictly between 0 and 100, then 100 once it completed. Reads
 * repeat until the task ends; the wait is bounded, nothing is asserted about timing.
 */
const MODEL = 'vendor_b/family_c-2.6/reference-to-video';
const LATENCY_MS = 1_500;
const WAIT_LIMIT_MS = 20_000;

interface Reading {
  progress: number;
  done: boolean;
  completed: boolean;
}

interface Surface {
  create(t: TestService, key: string): Promise<string>;
  read(t: TestService, key: string, id: string): Promise<Reading>;
}

const SURFACES: [string, Surface][] = [
  [
    'GET /v1/videos/{id}',
    {
      async create(t, key) {
        const r = await t.call('POST', '/v1/videos', {
          key,
          body: { model: MODEL, prompt: 'a lighthouse at dusk', seconds: '2' },
        });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        return r.body.id as string;
      },
      async read(t, key, id) {
        const r = await t.call('GET', `/v1/videos/${id}`, { key });
        expect(r.status).toBe(200);
        return {
          progress: r.body.progress,
          done: r.body.status === 'completed' || r.body.status === 'failed',
          completed: r.body.status === 'completed',
        };
      },
    },
  ],
  [
    'GET /api/v1/jobs/recordInfo',
    {
      async create(t, key) {
        const r = await t.call('POST', '/api/v1/jobs/createTask', {
          key,
          body: { model: MODEL, input: { prompt: 'a lighthouse at dusk', duration_seconds: 2 } },
        });
        expect(r.status, JSON.stringify(r.body)).toBe(202);
        return r.body.data.taskId as string;
      },
      async read(t, key, id) {
        const r = await t.call('GET', `/api/v1/jobs/recordInfo?taskId=${encodeURIComponent(id)}`, { key });
        expect(r.status).toBe(200);
        const state = r.body.data.state as string;
        return {
          progress: r.body.data.progress,
          done: ['succeeded', 'failed', 'expired', 'canceled'].includes(state),
          completed: state === 'succeeded',
        };
      },
    },
  ],
];

describe('progress moves while the deployment works (issue 21 item 7)', () => {
  const svc = serviceForSuite(undefined, { simulatorLatencyMs: LATENCY_MS });

  it.each(SURFACES)('%s: 0 < progress < 100 while running, then 100 when completed', async (_name, surface) => {
    const { apiKey } = await svc.t.account(10_000);
    const id = await surface.create(svc.t, apiKey);
    const seen: number[] = [];
    const until = Date.now() + WAIT_LIMIT_MS;
    let last: Reading;
    for (;;) {
      last = await surface.read(svc.t, apiKey, id);
      if (last.done) break;
      seen.push(last.progress);
      if (Date.now() > until) throw new Error(`task ${id} not finished; progress seen: ${seen.join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(last).toEqual({ progress: 100, done: true, completed: true });
    expect(
      seen.filter((p) => p > 0 && p < 100).length,
      `progress seen while running: ${seen.join(', ')}`,
    ).toBeGreaterThan(0);
    // Progress never goes back.
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);
  });
});
