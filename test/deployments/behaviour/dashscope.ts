import { DashscopeServer, dashscopeError } from '../../../support/upstreams/vendors/dashscope-server.js';
import type { Special } from '../../../support/upstreams/loopback-upstream.js';
import { type BehaviourAdapter, loopback, type SubmitFault, serverFaults } from './adapter.js';

/** dashscope (spec/providers/dashscope.yaml): DashScope's error codes; POST .../cancel stops a PENDING task only. */
const ANSWERS: Record<SubmitFault, Special> = {
  busy: dashscopeError(429, 'Throttling', 'Requests throttling triggered.'),
  'busy-retry-after': dashscopeError(
    429,
    'Throttling.RateQuota',
    'Requests rate limit exceeded, please try again later.',
    '20',
  ),
  unauthorized: dashscopeError(401, 'InvalidApiKey', 'Invalid API-key provided.'),
  refused: dashscopeError(400, 'DataInspectionFailed', 'Input data may contain inappropriate content.'),
};

export const adapter: BehaviourAdapter = {
  kind: 'dashscope',
  model: 'vendor_b/family_c-2.6/text-to-video',
  upstreamModel: 'wan2.6-t2v',
  async start(faults) {
    const server = await new DashscopeServer(serverFaults(faults, (fault) => ANSWERS[fault])).start();
    return loopback(server.url, server, {
      submits: () => server.submits.map((s) => s.body),
      jobs: () => [...server.tasks.values()],
      cancels: () => server.cancels,
      refusedCancels: () => server.refusedCancels,
    });
  },
  failReason: 'Output data may contain inappropriate content.',
  refusalReason: 'Input data may contain inappropriate content.',
  cancel: 'queued only',
  unsupported: {},
};
