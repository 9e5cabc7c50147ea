import { FalQueueServer } from '../../../support/upstreams/fal-queue-server.js';
import { JobsProtocolServer } from '../../../support/upstreams/jobs-protocol-server.js';
import type { QueuedCancelServer, Special } from '../../../support/upstreams/loopback-upstream.js';
import { OpenAiVideosServer } from '../../../support/upstreams/openai-videos-server.js';
import { ReplicateServer } from '../../../support/upstreams/replicate-server.js';
import { ArkServer, arkError } from '../../../support/upstreams/vendors/ark-server.js';
import { DashscopeServer, dashscopeError } from '../../../support/upstreams/vendors/dashscope-server.js';
import { KlingServer } from '../../../support/upstreams/vendors/kling-server.js';
import { LumaServer } from '../../../support/upstreams/vendors/luma-server.js';
import { MinimaxServer, minimaxRefusal } from '../../../support/upstreams/vendors/minimax-server.js';
import { RunwayServer } from '../../../support/upstreams/vendors/runway-server.js';
import type { SubmitOverride } from '../../../support/upstreams/vendors/vendor-server.js';
import { type BehaviourAdapter, adapterRow, type ServerJob } from './adapter.js';

/**
 * Every adapter the behaviour suite runs, a row per kind of upstream: the four coded protocols
 * (runtime/upstreams/<kind>.ts) and every provider profile (spec/providers/<kind>.yaml). A row
 * names its catalogue model, opens its vendor's loopback server and says how the suite reads it,
 * and gives the vendor's answers to a faulted submit (each from the vendor's published errors),
 * its reasons, its cancel and the scenarios it cannot express.
 */

/** The submitted bodies, as most servers keep them ({ body } per submit). */
const bodies = (submits: { body: unknown }[]) => () => submits.map((s) => s.body);

/** OpenAI's error object ({ error: { message, type, param, code } }, platform.openai.com/docs/guides/error-codes). */
const openAiError = (status: number, code: string, type: string, message: string, retryAfter?: string): Special => ({
  status,
  body: { error: { message, type, param: null, code } },
  ...(retryAfter ? { retryAfter } : {}),
});

/** Ark's and DashScope's servers keep what the suite reads the same way (support/upstreams QueuedCancelServer). */
const queuedCancelReads = (server: QueuedCancelServer<{ body: unknown }, ServerJob>) => ({
  baseUrl: server.url,
  submits: bodies(server.submits),
  jobs: () => [...server.tasks.values()],
  cancels: () => server.cancels,
  refusedCancels: () => server.refusedCancels,
});

/** An answer with a body, as most servers take it instead of a job. */
type Answer = { status: number; body: unknown; retryAfter?: string };

/** Replicate's problem details (replicate.com/docs/topics/predictions/...): 429 throttled, 401, 422 input validation. */
const problem = (status: number, title: string, detail: string, more: object = {}): Answer => ({
  status,
  body: { title, detail, status, ...more },
});

/** Kling's JWT is signed with ACCESS:SECRET; the suite's key is the secret. */
const KLING_ACCESS = 'AK-operator';

export const ADAPTERS: Record<string, Omit<BehaviourAdapter, 'kind'>> = {
  /** OpenAI's Videos API; DELETE removes a video in any state. */
  'openai-videos': adapterRow({
    model: 'vendor_a/family_a-2.5/text-to-video',
    upstreamModel: 'sora-2',
    open: (options) => new OpenAiVideosServer(options).start(),
    reads: (server) => ({
      baseUrl: server.baseUrl,
      submits: () => server.submits,
      jobs: () => [...server.videos.values()],
      cancels: () => server.deletes,
    }),
    answers: {
      busy: openAiError(429, 'rate_limit_exceeded', 'requests', 'Rate limit reached for requests.'),
      'busy-retry-after': openAiError(429, 'rate_limit_exceeded', 'requests', 'Rate limit reached for requests.', '20'),
      unauthorized: openAiError(401, 'invalid_api_key', 'invalid_request_error', 'Incorrect API key provided.'),
      refused: openAiError(
        400,
        'moderation_blocked',
        'invalid_request_error',
        'Your request was blocked by our moderation system.',
      ),
    },
    failReason: 'Your request was blocked by our moderation system.',
    refusalReason: 'Your request was blocked by our moderation system.',
    cancel: 'any',
    unsupported: {
      'deadline without a cancel': 'the Videos API deletes a video in any state: no video outlives its deadline there',
      'provider cancel': 'the Videos API publishes no cancelled status: a video ends completed or failed',
      reconciliation: 'the Videos API deletes a running video too: nothing runs on after the deadline to reconcile',
    },
  }),

  /** The createTask / recordInfo protocol of the specification; its envelope's error codes 429, 401, 422. */
  jobs: adapterRow({
    model: 'vendor_a/family_a-2.0-fast/text-to-video',
    upstreamModel: 'vendor_a/family_a-2.0-fast/text-to-video',
    open: (options) => new JobsProtocolServer(options).start(),
    reads: (server) => ({
      baseUrl: server.baseUrl,
      submits: bodies(server.submits),
      jobs: () => [...server.jobs.values()],
    }),
    answers: {
      busy: { status: 429, msg: 'Too many requests.' },
      'busy-retry-after': { status: 429, retryAfter: '20', msg: 'Too many requests.' },
      unauthorized: { status: 401, msg: 'Missing or invalid API key.' },
      refused: { status: 422, msg: 'The prompt was rejected by the content policy.' },
    },
    failReason: 'Content policy violation: the prompt was rejected',
    refusalReason: 'The prompt was rejected by the content policy.',
    cancel: 'none',
    unsupported: {
      'deadline with a cancel': 'the jobs protocol has no cancel: an accepted task cannot be stopped',
      'provider cancel':
        'an accepted task cannot be stopped (the specification: `canceled` exists for old records only)',
    },
  }),

  /**
   * fal's queue (docs.fal.ai, Queue; errors: 429 busy, 401 the key, 422 the input refused). PUT
   * cancel_url drops a queued request; a running one is only signalled, and the loopback app runs
   * on (runningRunsOn), as an app that does not handle the signal does.
   */
  'fal-queue': adapterRow({
    model: 'vendor_a/family_a-2.0-mini/text-to-video',
    upstreamModel: 'fal-ai/family-a/v2/mini/text-to-video',
    open: ({ failWhenPromptContains, ...options }) =>
      new FalQueueServer({ ...options, refuseWhenPromptContains: failWhenPromptContains, runningRunsOn: true }).start(),
    reads: (server) => ({
      baseUrl: server.baseUrl,
      submits: bodies(server.submits),
      jobs: () => [...server.requests.values()],
      cancels: () => server.cancels,
      refusedCancels: () => server.cancelsRunOn,
    }),
    answers: {
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
            {
              loc: ['body', 'prompt'],
              msg: 'The prompt violates the content policy.',
              type: 'content_policy_violation',
            },
          ],
        },
      },
    },
    failReason: 'The content could not be processed because it contained material flagged by a content checker.',
    refusalReason: 'The prompt violates the content policy.',
    cancel: 'queued only',
    unsupported: {
      'provider cancel':
        "fal's status has no cancelled value: a request cancelled elsewhere reads COMPLETED and its result is an error",
    },
  }),

  /** Replicate's predictions; urls.cancel stops a prediction starting or processing. */
  replicate: adapterRow({
    model: 'vendor_c/4.0/text-to-video',
    upstreamModel: 'vendor-c/video-4',
    open: (options) => new ReplicateServer(options).start(),
    reads: (server) => ({
      baseUrl: server.baseUrl,
      submits: bodies(server.submits),
      jobs: () => [...server.predictions.values()],
      // Stopped by urls.cancel or by the Cancel-After the service sent (Replicate's own cancel at the deadline).
      cancels: () =>
        [...server.predictions.keys()].filter((id) => ['canceled', 'aborted'].includes(server.statusOf(id) ?? '')),
    }),
    answers: {
      busy: problem(429, 'Too Many Requests', 'Request was throttled.'),
      'busy-retry-after': {
        ...problem(429, 'Too Many Requests', 'Request was throttled. Expected available in 20 seconds.'),
        retryAfter: '20',
      },
      unauthorized: problem(401, 'Unauthenticated', 'You did not pass a valid authentication token'),
      // A validation problem names its fields (invalid_fields), which the task's reason is read from.
      refused: problem(422, 'Input validation failed', '- input.duration: Must be less than or equal to 4\n', {
        invalid_fields: [
          { type: 'less_than_equal', field: 'input.duration', description: 'Must be less than or equal to 4' },
        ],
      }),
    },
    failReason: 'The input or output was flagged as sensitive.',
    refusalReason: 'input.duration: Must be less than or equal to 4',
    cancel: 'any',
    unsupported: {
      'deadline without a cancel':
        'Replicate cancels a processing prediction too (urls.cancel, Cancel-After): none outlives its deadline there',
      reconciliation: 'Replicate cancels a processing prediction too: nothing runs on after the deadline to reconcile',
    },
  }),

  /** Ark's answers from its error codes page; DELETE cancels a queued task only. */
  ark: adapterRow({
    model: 'vendor_a/family_a-2.0/text-to-video',
    upstreamModel: 'dreamina-seedance-2-0-260128',
    open: (options) => new ArkServer(options).start(),
    reads: queuedCancelReads,
    answers: {
      busy: arkError(
        429,
        'ServerOverloaded',
        'The service is currently unable to handle the request.',
        'TooManyRequests',
      ),
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
    },
    failReason: 'The request failed because the output video may contain sensitive information.',
    refusalReason: 'The request failed because the input text may contain sensitive information.',
    cancel: 'queued only',
    unsupported: {},
  }),

  /** DashScope's error codes; POST .../cancel stops a PENDING task only. */
  dashscope: adapterRow({
    model: 'vendor_b/family_c-2.6/text-to-video',
    upstreamModel: 'wan2.6-t2v',
    open: (options) => new DashscopeServer(options).start(),
    reads: queuedCancelReads,
    answers: {
      busy: dashscopeError(429, 'Throttling', 'Requests throttling triggered.'),
      'busy-retry-after': dashscopeError(
        429,
        'Throttling.RateQuota',
        'Requests rate limit exceeded, please try again later.',
        '20',
      ),
      unauthorized: dashscopeError(401, 'InvalidApiKey', 'Invalid API-key provided.'),
      refused: dashscopeError(400, 'DataInspectionFailed', 'Input data may contain inappropriate content.'),
    },
    failReason: 'Output data may contain inappropriate content.',
    refusalReason: 'Input data may contain inappropriate content.',
    cancel: 'queued only',
    unsupported: {},
  }),

  /** Kling's envelopes (the server builds them); no cancel. */
  kling: adapterRow<KlingServer, SubmitOverride>({
    model: 'vendor_b/family_c-3.0/text-to-video',
    upstreamModel: 'kling-v2-1',
    secret: (key) => `${KLING_ACCESS}:${key}`,
    // Kling's key is the JWT's signing secret, not a Bearer key.
    open: ({ apiKey, ...options }) =>
      new KlingServer({ accessKey: KLING_ACCESS, secretKey: apiKey, ...options }).start(),
    reads: (server) => ({
      baseUrl: server.baseUrl,
      submits: bodies(server.submits),
      jobs: () => [...server.jobs.values()],
      cancels: () => server.cancels,
      refusedCancels: () => server.cancels,
    }),
    answers: (fault, server) => {
      if (fault === 'busy') return server.envelope('concurrency');
      if (fault === 'busy-retry-after') return { ...server.envelope('rateLimit'), retryAfter: '20' };
      if (fault === 'unauthorized') return server.envelope('unauthorized');
      return server.envelope('contentSecurity');
    },
    failReason: 'Failure to pass the risk control system',
    refusalReason: 'content security policy',
    cancel: 'none',
    unsupported: {
      'deadline with a cancel': 'Kling has no cancel: a task runs to its end',
      'provider cancel': 'Kling publishes no cancelled state: a task ends succeed or failed',
    },
  }),

  /** Luma's { detail } errors; Luma has no cancel (DELETE removes a generation). */
  luma: adapterRow({
    model: 'vendor_b/family_c-3.0-pro/text-to-video',
    upstreamModel: 'ray-2',
    input: { aspect_ratio: '16:9' },
    open: (options) => new LumaServer(options).start(),
    reads: (server) => ({
      baseUrl: server.baseUrl,
      submits: bodies(server.submits),
      jobs: () => [...server.jobs.values()],
      cancels: () => server.cancels,
      refusedCancels: () => server.cancels,
    }),
    answers: {
      busy: { status: 429, body: { detail: 'Too many concurrent generations' } },
      'busy-retry-after': { status: 429, body: { detail: 'Rate limited' }, retryAfter: '20' },
      unauthorized: { status: 401, body: { detail: 'Invalid API key' } },
      refused: { status: 400, body: { detail: 'Insufficient credits to create generation' } },
    },
    failReason: 'advanced moderation failed',
    refusalReason: 'Insufficient credits',
    cancel: 'none',
    unsupported: {
      'deadline with a cancel': 'Luma has no cancel: a generation runs to its end',
      'provider cancel': 'Luma publishes no cancelled state: a generation ends completed or failed',
    },
  }),

  /** MiniMax's failures are 200 answers with base_resp; MiniMax has no cancel. */
  minimax: adapterRow({
    model: 'vendor_d/family_d/text-to-video',
    upstreamModel: 'MiniMax-Hailuo-02',
    input: { duration_seconds: 6 },
    open: (options) => new MinimaxServer(options).start(),
    reads: (server) => ({
      baseUrl: server.url,
      submits: bodies(server.submits),
      jobs: () => [...server.tasks.values()],
      // MiniMax has no cancel path: whatever the service would ask lands among the strays.
      cancels: () => server.strays,
      refusedCancels: () => server.strays,
    }),
    answers: {
      busy: minimaxRefusal(1002, 'rate limit exceeded(RPM)'),
      'busy-retry-after': {
        status: 429,
        body: { base_resp: { status_code: 1002, status_msg: 'rate limit exceeded(RPM)' } },
        retryAfter: '20',
      },
      unauthorized: minimaxRefusal(1004, 'not authorized'),
      refused: minimaxRefusal(1026, 'input new_sensitive'),
    },
    failReason: 'output video sensitive',
    refusalReason: 'input new_sensitive',
    cancel: 'none',
    unsupported: {
      'deadline with a cancel': 'MiniMax has no cancel: a task runs to its end',
      'provider cancel': 'MiniMax publishes no cancelled state: a task ends Success or Fail',
    },
  }),

  /** Runway's { error } bodies; DELETE /v1/tasks/{id} cancels a pending or running task. */
  runway: adapterRow({
    model: 'vendor_b/family_b-1.1/text-to-video',
    upstreamModel: 'gen4_turbo',
    open: (options) => new RunwayServer(options).start(),
    reads: (server) => ({
      baseUrl: server.baseUrl,
      submits: bodies(server.submits),
      jobs: () => [...server.jobs.values()],
      cancels: () => server.cancels,
    }),
    answers: {
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
    },
    failReason: 'did not pass our content moderation',
    refusalReason: 'Validation of body failed',
    cancel: 'any',
    unsupported: {
      'deadline without a cancel': 'Runway cancels a running task too: no task outlives its deadline there',
      reconciliation: 'Runway cancels a running task too: nothing runs on after the deadline to reconcile',
    },
  }),
};
