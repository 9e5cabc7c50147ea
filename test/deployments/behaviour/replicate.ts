import { ReplicateServer } from '../../../support/upstreams/replicate-server.js';
import { type BehaviourAdapter, loopback, type SubmitFault, serverFaults } from './adapter.js';

/** Replicate's problem details (replicate.com/docs/topics/predictions/...): 429 throttled, 401, 422 input validation. */
const problem = (status: number, title: string, detail: string) => ({ title, detail, status });
const ANSWERS: Record<SubmitFault, { status: number; body: unknown; retryAfter?: string }> = {
  busy: { status: 429, body: problem(429, 'Too Many Requests', 'Request was throttled.') },
  'busy-retry-after': {
    status: 429,
    body: problem(429, 'Too Many Requests', 'Request was throttled. Expected available in 20 seconds.'),
    retryAfter: '20',
  },
  unauthorized: {
    status: 401,
    body: problem(401, 'Unauthenticated', 'You did not pass a valid authentication token'),
  },
  // A validation problem names its fields (invalid_fields), which the task's reason is read from.
  refused: {
    status: 422,
    body: {
      ...problem(422, 'Input validation failed', '- input.duration: Must be less than or equal to 4\n'),
      invalid_fields: [
        { type: 'less_than_equal', field: 'input.duration', description: 'Must be less than or equal to 4' },
      ],
    },
  },
};

/** replicate (runtime/upstreams/replicate.ts): urls.cancel stops a prediction starting or processing. */
export const adapter: BehaviourAdapter = {
  kind: 'replicate',
  model: 'vendor_c/4.0/text-to-video',
  upstreamModel: 'vendor-c/video-4',
  async start(faults) {
    const server = await new ReplicateServer(serverFaults(faults, (fault) => ANSWERS[fault])).start();
    return loopback(server.baseUrl, server, {
      submits: () => server.submits.map((s) => s.body),
      jobs: () => [...server.predictions.values()],
      // Stopped by urls.cancel or by the Cancel-After the service sent (Replicate's own cancel at the deadline).
      cancels: () =>
        [...server.predictions.keys()].filter((id) => ['canceled', 'aborted'].includes(server.statusOf(id) ?? '')),
    });
  },
  failReason: 'The input or output was flagged as sensitive.',
  refusalReason: 'input.duration: Must be less than or equal to 4',
  cancel: 'any',
  unsupported: {
    'deadline without a cancel':
      'Replicate cancels a processing prediction too (urls.cancel, Cancel-After): none outlives its deadline there',
    reconciliation: 'Replicate cancels a processing prediction too: nothing runs on after the deadline to reconcile',
  },
};
