import { FalQueueServer } from '../../../support/upstreams/fal-queue-server.js';
import { type BehaviourAdapter, loopback, type SubmitFault, serverFaults } from './adapter.js';

/** fal's answers before a request exists (docs.fal.ai, Queue; errors): 429 busy, 401 the key, 422 the input refused. */
const ANSWERS: Record<SubmitFault, { status: number; body: unknown; retryAfter?: string }> = {
  busy: { status: 429, body: { detail: 'Too many requests: concurrent request limit reached' } },
  'busy-retry-after': {
    status: 429,
    body: { detail: 'Too many requests: concurrent request limit reached' },
    retryAfter: '20',
  },
  unauthorized: { status: 401, body: { detail: 'No user found for Key ID and Secret' } },
  refused: {
    status: 422,
    body: {
      detail: [
        { loc: ['body', 'prompt'], msg: 'The prompt violates the content policy.', type: 'content_policy_violation' },
      ],
    },
  },
};

/**
 * fal-queue (runtime/upstreams/fal-queue.ts): PUT cancel_url drops a queued request; a running one
 * is only signalled, and the loopback app runs on (runningRunsOn), as an app that does not handle
 * the signal does.
 */
export const adapter: BehaviourAdapter = {
  kind: 'fal-queue',
  model: 'vendor_a/family_a-2.0-mini/text-to-video',
  upstreamModel: 'fal-ai/family-a/v2/mini/text-to-video',
  async start(faults) {
    const { failWhenPromptContains, ...options } = serverFaults(faults, (fault) => ANSWERS[fault]);
    const server = await new FalQueueServer({
      ...options,
      refuseWhenPromptContains: failWhenPromptContains,
      runningRunsOn: true,
    }).start();
    return loopback(server.baseUrl, server, {
      submits: () => server.submits.map((s) => s.body),
      jobs: () => [...server.requests.values()],
      cancels: () => server.cancels,
      refusedCancels: () => server.cancelsRunOn,
    });
  },
  failReason: 'The content could not be processed because it contained material flagged by a content checker.',
  refusalReason: 'The prompt violates the content policy.',
  cancel: 'queued only',
  unsupported: {
    'provider cancel':
      "fal's status has no cancelled value: a request cancelled elsewhere reads COMPLETED and its result is an error",
  },
};
