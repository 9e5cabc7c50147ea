import { ArkServer, arkError } from '../../../support/upstreams/vendors/ark-server.js';
import type { Special } from '../../../support/upstreams/loopback-upstream.js';
import { type BehaviourAdapter, loopback, type SubmitFault, serverFaults } from './adapter.js';

/** ark (spec/providers/ark.yaml): Ark's answers from its error codes page; DELETE cancels a queued task only. */
const ANSWERS: Record<SubmitFault, Special> = {
  busy: arkError(429, 'ServerOverloaded', 'The service is currently unable to handle the request.', 'TooManyRequests'),
  'busy-retry-after': arkError(
    429,
    'RateLimitExceeded.EndpointRPMExceeded',
    'The request has exceeded the rate limit of your endpoint.',
    'TooManyRequests',
    '20',
  ),
  unauthorized: arkError(
    401,
    'AuthenticationError',
    'The API key in the request is missing or invalid.',
    'Unauthorized',
  ),
  refused: arkError(
    400,
    'InputTextSensitiveContentDetected',
    'The request failed because the input text may contain sensitive information.',
    'BadRequest',
  ),
};

export const adapter: BehaviourAdapter = {
  kind: 'ark',
  model: 'vendor_a/family_a-2.0/text-to-video',
  upstreamModel: 'dreamina-seedance-2-0-260128',
  async start(faults) {
    const server = await new ArkServer(serverFaults(faults, (fault) => ANSWERS[fault])).start();
    return loopback(server.url, server, {
      submits: () => server.submits.map((s) => s.body),
      jobs: () => [...server.tasks.values()],
      cancels: () => server.cancels,
      refusedCancels: () => server.refusedCancels,
    });
  },
  failReason: 'The request failed because the output video may contain sensitive information.',
  refusalReason: 'The request failed because the input text may contain sensitive information.',
  cancel: 'queued only',
  unsupported: {},
};
