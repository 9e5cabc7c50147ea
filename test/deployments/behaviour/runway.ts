import { RunwayServer } from '../../../support/upstreams/vendors/runway-server.js';
import type { SubmitOverride } from '../../../support/upstreams/vendors/vendor-server.js';
import { type BehaviourAdapter, loopback, type SubmitFault, serverFaults } from './adapter.js';

/** runway (spec/providers/runway.yaml): { error } bodies; DELETE /v1/tasks/{id} cancels a pending or running task. */
const ANSWERS: Record<SubmitFault, SubmitOverride> = {
  busy: { status: 429, body: { error: 'You have exceeded the rate limit.' } },
  'busy-retry-after': { status: 429, body: { error: 'You have exceeded the rate limit.' }, retryAfter: '20' },
  unauthorized: {
    status: 401,
    body: { error: 'Incorrect API key provided. You can find your API key in the developer portal.' },
  },
  refused: {
    status: 400,
    body: { error: 'Validation of body failed', issues: [{ path: ['promptText'], message: 'Too long' }] },
  },
};

export const adapter: BehaviourAdapter = {
  kind: 'runway',
  model: 'vendor_b/family_b-1.1/text-to-video',
  upstreamModel: 'gen4_turbo',
  async start(faults) {
    const server = await new RunwayServer(serverFaults(faults, (fault) => ANSWERS[fault])).start();
    return loopback(server.baseUrl, server, {
      submits: () => server.submits.map((s) => s.body),
      jobs: () => [...server.jobs.values()],
      cancels: () => server.cancels,
    });
  },
  failReason: 'did not pass our content moderation',
  refusalReason: 'Validation of body failed',
  cancel: 'any',
  unsupported: {
    'deadline without a cancel': 'Runway cancels a running task too: no task outlives its deadline there',
    reconciliation: 'Runway cancels a running task too: nothing runs on after the deadline to reconcile',
  },
};
