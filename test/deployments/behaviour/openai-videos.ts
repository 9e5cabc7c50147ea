import { OpenAiVideosServer } from '../../../support/upstreams/openai-videos-server.js';
import type { Special } from '../../../support/upstreams/loopback-upstream.js';
import { type BehaviourAdapter, loopback, type SubmitFault, serverFaults } from './adapter.js';

/** OpenAI's error object ({ error: { message, type, param, code } }, platform.openai.com/docs/guides/error-codes). */
const openAiError = (status: number, code: string, type: string, message: string, retryAfter?: string): Special => ({
  status,
  body: { error: { message, type, param: null, code } },
  ...(retryAfter ? { retryAfter } : {}),
});

/** openai-videos (runtime/upstreams/openai-videos.ts): OpenAI's Videos API; DELETE removes a video in any state. */
const ANSWERS: Record<SubmitFault, Special> = {
  busy: openAiError(429, 'rate_limit_exceeded', 'requests', 'Rate limit reached for requests.'),
  'busy-retry-after': openAiError(429, 'rate_limit_exceeded', 'requests', 'Rate limit reached for requests.', '20'),
  unauthorized: openAiError(401, 'invalid_api_key', 'invalid_request_error', 'Incorrect API key provided.'),
  refused: openAiError(
    400,
    'moderation_blocked',
    'invalid_request_error',
    'Your request was blocked by our moderation system.',
  ),
};

export const adapter: BehaviourAdapter = {
  kind: 'openai-videos',
  model: 'vendor_a/family_a-2.5/text-to-video',
  upstreamModel: 'sora-2',
  async start(faults) {
    const server = await new OpenAiVideosServer(serverFaults(faults, (fault) => ANSWERS[fault])).start();
    return loopback(server.baseUrl, server, {
      submits: () => server.submits,
      jobs: () => [...server.videos.values()],
      cancels: () => server.deletes,
    });
  },
  failReason: 'Your request was blocked by our moderation system.',
  refusalReason: 'Your request was blocked by our moderation system.',
  cancel: 'any',
  unsupported: {
    'deadline without a cancel': 'the Videos API deletes a video in any state: no video outlives its deadline there',
    'provider cancel': 'the Videos API publishes no cancelled status: a video ends completed or failed',
    reconciliation: 'the Videos API deletes a running video too: nothing runs on after the deadline to reconcile',
  },
};
