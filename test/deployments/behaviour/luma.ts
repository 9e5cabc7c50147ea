import { LumaServer } from '../../../support/upstreams/vendors/luma-server.js';
import type { SubmitOverride } from '../../../support/upstreams/vendors/vendor-server.js';
import { type BehaviourAdapter, loopback, type SubmitFault, serverFaults } from './adapter.js';

/** luma (spec/providers/luma.yaml): { detail } errors; Luma has no cancel (DELETE removes a generation). */
const ANSWERS: Record<SubmitFault, SubmitOverride> = {
  busy: { status: 429, body: { detail: 'Too many concurrent generations' } },
  'busy-retry-after': { status: 429, body: { detail: 'Rate limited' }, retryAfter: '20' },
  unauthorized: { status: 401, body: { detail: 'Invalid API key' } },
  refused: { status: 400, body: { detail: 'Insufficient credits to create generation' } },
};

export const adapter: BehaviourAdapter = {
  kind: 'luma',
  model: 'vendor_b/family_c-3.0-pro/text-to-video',
  upstreamModel: 'ray-2',
  input: { aspect_ratio: '16:9' },
  async start(faults) {
    const server = await new LumaServer(serverFaults(faults, (fault) => ANSWERS[fault])).start();
    return loopback(server.baseUrl, server, {
      submits: () => server.submits.map((s) => s.body),
      jobs: () => [...server.jobs.values()],
      cancels: () => server.cancels,
      refusedCancels: () => server.cancels,
    });
  },
  failReason: 'advanced moderation failed',
  refusalReason: 'Insufficient credits',
  cancel: 'none',
  unsupported: {
    'deadline with a cancel': 'Luma has no cancel: a generation runs to its end',
    'provider cancel': 'Luma publishes no cancelled state: a generation ends completed or failed',
  },
};
