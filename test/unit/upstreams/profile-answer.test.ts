import { describe, expect, it } from 'vitest';
import { catalogue } from '../../../generated/catalogue.js';
import { providerProfile } from '../../../generated/provider-profiles.js';
import { UpstreamError } from '../../../runtime/deployments/upstream-error.js';
import {
  cancelAnswer,
  lookupAnswer,
  pollAnswer,
  probeAnswer,
  resultAnswer,
  submitAnswer,
  type ProfileAnswer,
} from '../../../runtime/upstreams/profile-answer.js';
import type { ProfileHandle } from '../../../runtime/upstreams/profile-request.js';

/**
 * runtime/upstreams/profile-answer.ts: what each vendor profile (spec/providers/<vendor>.yaml)
 * reads in the answers the vendor's published API documents: the job's id, its state and
 * progress, its links, or the failure and its class (busy, unauthorized: fail over; rejected: the
 * task fails; lost, server, configuration, protocol). The source of each vendor's table is cited
 * above it; the answers are that source's, not the profile's.
 */

const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);
const JOB = {
  taskId: 'task_0001',
  model: catalogue.get('vendor_b/family_c-2.6/text-to-video')!.info,
  input: { prompt: 'a red kite over the sea' },
};
const CLIP = 'https://cdn.example/output/clip.mp4';
const CLIP2 = 'https://cdn.example/output/clip-2.mp4';

const answer = (status: number, json?: unknown, headers: Record<string, string> = {}): ProfileAnswer => ({
  status,
  headers,
  json,
});
const ok = (json: unknown, headers: Record<string, string> = {}) => answer(200, json, headers);

type Read = 'submit' | 'lookup' | 'poll' | 'result' | 'cancel' | 'probe';
type Row = [string, { given: { read: Read; answer: ProfileAnswer }; want: unknown }];

/** A failure as the router and the task see it: its class, and what it carries. */
function failureOf(error: UpstreamError) {
  const { status, retryAfterMs, reason, path } = error.details;
  return {
    failure: error.failure,
    ...(status !== undefined ? { status } : {}),
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    ...(reason !== undefined ? { reason } : {}),
    ...(path !== undefined ? { path } : {}),
  };
}

/** One vendor's table: each answer read by the operation it answers, the job's handle `handle`. */
function table(vendor: string, base: string, handle: ProfileHandle, rows: Row[]) {
  const profile = providerProfile(vendor)!;
  const read = ({ read, answer: given }: Row[1]['given']): unknown => {
    switch (read) {
      case 'submit': {
        const out = submitAnswer(profile, 'submit', given, NOW, new URL(base + handle.submitPath));
        return 'ids' in out ? out : failureOf(out.error);
      }
      case 'lookup':
        return { ids: lookupAnswer(profile, given) };
      case 'poll':
        return pollAnswer(profile, 'poll', given, handle, JOB, NOW);
      case 'result':
        return { links: resultAnswer(profile, 'result', given, JOB, NOW) };
      case 'cancel':
        return { cancel: cancelAnswer(profile, 'cancel', given, NOW) };
      case 'probe': {
        const { ok: fine, outcome } = probeAnswer(profile, 'probe', given);
        return { ok: fine, outcome };
      }
    }
  };
  it.each(rows)('%s', (_, { given, want }) => {
    let got: unknown;
    try {
      got = read(given);
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      got = failureOf(error);
    }
    expect(got).toEqual(want);
  });
}

/**
 * Runway: github:runwayml/sdk-node 4.12.0 src/resources/tasks.ts (TaskRetrieveResponse: PENDING,
 * THROTTLED, CANCELLED, RUNNING with progress 0..1, FAILED with failure and failureCode, SUCCEEDED
 * with output links), text-to-video.ts ({ id }), src/core/error.ts (errors by HTTP status, the
 * body as sent: { error }). Runway sends no error in a 2xx body: its table has no business code.
 */
describe('runway', () => {
  const id = '2b6e1c4e-0c7a-4b7e-9d55-8d0f5a2c9e11';
  const task = (rest: Record<string, unknown>) => ({ id, createdAt: '2026-11-28T12:00:00.000Z', ...rest });
  table('runway', 'https://api.runway.invalid', { submitPath: '/v1/text_to_video', ids: { id } }, [
    ['submit: { id } is the handle', { given: { read: 'submit', answer: ok({ id }) }, want: { ids: { id } } }],
    [
      'submit: a 2xx without an id is the protocol broken, never a job',
      { given: { read: 'submit', answer: ok({}) }, want: { failure: 'protocol' } },
    ],
    [
      'submit: 400 refuses the request (the task fails with Runway reason)',
      {
        given: { read: 'submit', answer: answer(400, { error: 'Validation of body failed', issues: [] }) },
        want: { failure: 'rejected', status: 400, reason: 'Validation of body failed' },
      },
    ],
    [
      'submit: 401 is the operator key',
      {
        given: { read: 'submit', answer: answer(401, { error: 'Invalid API key' }) },
        want: { failure: 'unauthorized', status: 401, reason: 'Invalid API key' },
      },
    ],
    [
      'submit: 429 with Retry-After is busy, the hint kept',
      {
        given: { read: 'submit', answer: answer(429, { error: 'Too many requests' }, { 'retry-after': '30' }) },
        want: { failure: 'busy', status: 429, retryAfterMs: 30_000, reason: 'Too many requests' },
      },
    ],
    [
      'submit: 502 is the server',
      { given: { read: 'submit', answer: answer(502, undefined) }, want: { failure: 'server', status: 502 } },
    ],
    [
      'submit: 404 at the submit path is the deployment configuration',
      {
        given: { read: 'submit', answer: answer(404, { error: 'Not found' }) },
        want: { failure: 'configuration', status: 404, reason: 'Not found', path: '/v1/text_to_video' },
      },
    ],
    [
      'poll: PENDING is queued (no progress)',
      { given: { read: 'poll', answer: ok(task({ status: 'PENDING' })) }, want: { state: 'running', progress: 0 } },
    ],
    [
      'poll: THROTTLED (the organisation at its concurrency) is queued',
      { given: { read: 'poll', answer: ok(task({ status: 'THROTTLED' })) }, want: { state: 'running', progress: 0 } },
    ],
    [
      'poll: RUNNING with progress 0.42 is 42 %',
      {
        given: { read: 'poll', answer: ok(task({ status: 'RUNNING', progress: 0.42 })) },
        want: { state: 'running', progress: 42 },
      },
    ],
    [
      'poll: RUNNING at progress 1 stays below 100 until SUCCEEDED',
      {
        given: { read: 'poll', answer: ok(task({ status: 'RUNNING', progress: 1 })) },
        want: { state: 'running', progress: 99 },
      },
    ],
    [
      'poll: SUCCEEDED gives every output link',
      {
        given: { read: 'poll', answer: ok(task({ status: 'SUCCEEDED', output: [CLIP, CLIP2] })) },
        want: { state: 'succeeded', links: [CLIP, CLIP2] },
      },
    ],
    [
      'poll: SUCCEEDED without a link is the protocol broken',
      { given: { read: 'poll', answer: ok(task({ status: 'SUCCEEDED', output: [] })) }, want: { failure: 'protocol' } },
    ],
    [
      'poll: FAILED with its failure as the reason, the task id taken out',
      {
        given: {
          read: 'poll',
          answer: ok(
            task({
              status: 'FAILED',
              failure: `Your text prompt for task ${id} did not pass our content moderation.`,
              failureCode: 'SAFETY.INPUT.TEXT',
            }),
          ),
        },
        want: { state: 'failed', reason: 'Your text prompt for task  did not pass our content moderation.' },
      },
    ],
    [
      'poll: CANCELLED (by Runway, not asked by the service) is canceled',
      { given: { read: 'poll', answer: ok(task({ status: 'CANCELLED' })) }, want: { state: 'canceled' } },
    ],
    [
      'poll: a status the SDK does not list is unmapped: a protocol failure of that poll',
      { given: { read: 'poll', answer: ok(task({ status: 'ARCHIVED' })) }, want: { failure: 'protocol' } },
    ],
    [
      'poll: 404 (a deleted task) is lost',
      { given: { read: 'poll', answer: answer(404, { error: 'Not found' }) }, want: { failure: 'lost', status: 404 } },
    ],
    [
      'poll: 429 with Retry-After is busy, the hint kept',
      {
        given: { read: 'poll', answer: answer(429, { error: 'Too many requests' }, { 'retry-after': '5' }) },
        want: { failure: 'busy', status: 429, retryAfterMs: 5_000, reason: 'Too many requests' },
      },
    ],
    ['cancel: 204 stops the task', { given: { read: 'cancel', answer: answer(204) }, want: { cancel: 'canceled' } }],
    [
      'cancel: 404 (already deleted) has nothing to stop',
      { given: { read: 'cancel', answer: answer(404, { error: 'Not found' }) }, want: { cancel: 'gone' } },
    ],
    [
      'probe: 404 for a task that exists nowhere is the key accepted',
      { given: { read: 'probe', answer: answer(404, { error: 'Not found' }) }, want: { ok: true, outcome: 'ok' } },
    ],
    [
      'probe: 401 is the key refused',
      {
        given: { read: 'probe', answer: answer(401, { error: 'Invalid API key' }) },
        want: { ok: false, outcome: 'key refused' },
      },
    ],
  ]);
});

/**
 * Luma: github:lumalabs/lumaai-node src/resources/generations/generations.ts (Generation: id,
 * state queued | dreaming | completed | failed, failure_reason, assets.video). Errors carry
 * { detail }; Luma sends no error in a 2xx body. No cancel.
 */
describe('luma', () => {
  const id = 'd1968551-6113-4b46-b567-09210c2e79b0';
  const generation = (rest: Record<string, unknown>) => ({ id, model: 'ray-2', failure_reason: null, ...rest });
  table('luma', 'https://api.luma.invalid/dream-machine/v1', { submitPath: '/generations/video', ids: { id } }, [
    [
      'submit: the Generation, queued, is the handle',
      { given: { read: 'submit', answer: ok(generation({ state: 'queued', assets: null })) }, want: { ids: { id } } },
    ],
    [
      'submit: 400 with a detail refuses the request',
      {
        given: { read: 'submit', answer: answer(400, { detail: 'Invalid duration: 7s' }) },
        want: { failure: 'rejected', status: 400, reason: 'Invalid duration: 7s' },
      },
    ],
    [
      'submit: 401 is the operator key',
      {
        given: { read: 'submit', answer: answer(401, { detail: 'Invalid API key' }) },
        want: { failure: 'unauthorized', status: 401, reason: 'Invalid API key' },
      },
    ],
    [
      'submit: 429 with Retry-After is busy',
      {
        given: { read: 'submit', answer: answer(429, { detail: 'Rate limit exceeded' }, { 'retry-after': '12' }) },
        want: { failure: 'busy', status: 429, retryAfterMs: 12_000, reason: 'Rate limit exceeded' },
      },
    ],
    [
      'submit: 500 is the server',
      {
        given: { read: 'submit', answer: answer(500, { detail: 'Internal Server Error' }) },
        want: { failure: 'server', status: 500, reason: 'Internal Server Error' },
      },
    ],
    [
      'poll: queued',
      { given: { read: 'poll', answer: ok(generation({ state: 'queued' })) }, want: { state: 'running', progress: 0 } },
    ],
    [
      'poll: dreaming is running (Luma gives no progress)',
      {
        given: { read: 'poll', answer: ok(generation({ state: 'dreaming' })) },
        want: { state: 'running', progress: 0 },
      },
    ],
    [
      'poll: completed gives assets.video',
      {
        given: { read: 'poll', answer: ok(generation({ state: 'completed', assets: { video: CLIP, image: null } })) },
        want: { state: 'succeeded', links: [CLIP] },
      },
    ],
    [
      'poll: failed with failure_reason',
      {
        given: { read: 'poll', answer: ok(generation({ state: 'failed', failure_reason: 'Prompt not allowed' })) },
        want: { state: 'failed', reason: 'Prompt not allowed' },
      },
    ],
    [
      'poll: failed without a reason says so in the service own words',
      {
        given: { read: 'poll', answer: ok(generation({ state: 'failed' })) },
        want: { state: 'failed', reason: 'The provider reported the generation failed.' },
      },
    ],
    [
      'poll: a state the SDK does not list is unmapped',
      { given: { read: 'poll', answer: ok(generation({ state: 'paused' })) }, want: { failure: 'protocol' } },
    ],
    [
      'poll: 403 is a refusal of the request',
      {
        given: { read: 'poll', answer: answer(403, { detail: 'Forbidden' }) },
        want: { failure: 'rejected', status: 403, reason: 'Forbidden' },
      },
    ],
  ]);
});

/**
 * Kling: the "Kling AI API Specification" (app.klingai.com/global/dev/document-api), General
 * Information (the error table: code 0 succeeds; 1000-1004 authentication, 1100-1103 account,
 * 1200-1203 request, 1300-1304 policy and limits, 5000-5002 Kling's own) and Video Generation
 * ({ code, message, request_id, data: { task_id, task_status submitted | processing | succeed |
 * failed, task_status_msg, task_result.videos[].url } }).
 */
describe('kling', () => {
  const id = 'CjMkZmYDbwUAAAAAAJqMZQ';
  const envelope = (code: number, message: string, data?: unknown) => ({
    code,
    message,
    request_id: 'CjhF4Wd1OpkAAAAAAKkpPw',
    ...(data !== undefined ? { data } : {}),
  });
  const task = (rest: Record<string, unknown>) => envelope(0, 'SUCCEED', { task_id: id, ...rest });
  table('kling', 'https://api.kling.invalid', { submitPath: '/v1/videos/text2video', ids: { id } }, [
    [
      'submit: code 0 with data.task_id is the handle',
      { given: { read: 'submit', answer: ok(task({ task_status: 'submitted' })) }, want: { ids: { id } } },
    ],
    [
      'submit: a 2xx carrying 1303 (concurrency) is busy, never a job',
      {
        given: {
          read: 'submit',
          answer: ok(envelope(1303, 'Concurrency or QPS exceeds the prepaid resource package limit')),
        },
        want: { failure: 'busy', reason: 'Concurrency or QPS exceeds the prepaid resource package limit' },
      },
    ],
    [
      'submit: a 2xx carrying 1102 (resource pack depleted) is the operator account',
      {
        given: { read: 'submit', answer: ok(envelope(1102, 'Resource pack depleted or expired')) },
        want: { failure: 'unauthorized', reason: 'Resource pack depleted or expired' },
      },
    ],
    [
      'submit: a 2xx carrying 1301 (content policy) refuses the request',
      {
        given: { read: 'submit', answer: ok(envelope(1301, 'Trigger the content security policy of the platform')) },
        want: { failure: 'rejected', reason: 'Trigger the content security policy of the platform' },
      },
    ],
    [
      'submit: a code outside the table is the vocabulary default, rejected',
      {
        given: { read: 'submit', answer: ok(envelope(1999, 'Something new')) },
        want: { failure: 'rejected', reason: 'Something new' },
      },
    ],
    [
      'submit: 401 with 1004 (token expired) is the operator key',
      {
        given: { read: 'submit', answer: answer(401, envelope(1004, 'Authorization has expired')) },
        want: { failure: 'unauthorized', status: 401, reason: 'Authorization has expired' },
      },
    ],
    [
      'submit: 429 with 1102 is classed by its code (the account), not its status',
      {
        given: { read: 'submit', answer: answer(429, envelope(1102, 'Resource pack depleted or expired')) },
        want: { failure: 'unauthorized', status: 429, reason: 'Resource pack depleted or expired' },
      },
    ],
    [
      'submit: 429 with 1302 and Retry-After is busy, the hint kept',
      {
        given: {
          read: 'submit',
          answer: answer(429, envelope(1302, 'The API request is too fast'), { 'retry-after': '2' }),
        },
        want: { failure: 'busy', status: 429, retryAfterMs: 2_000, reason: 'The API request is too fast' },
      },
    ],
    [
      'submit: 500 with 5000 is the server',
      {
        given: { read: 'submit', answer: answer(500, envelope(5000, 'Server internal error')) },
        want: { failure: 'server', status: 500, reason: 'Server internal error' },
      },
    ],
    [
      'lookup: the task found by external_task_id',
      { given: { read: 'lookup', answer: ok(task({ task_status: 'processing' })) }, want: { ids: { id } } },
    ],
    [
      'lookup: 1203 (no such resource) finds nothing',
      {
        given: { read: 'lookup', answer: ok(envelope(1203, 'Requested resource does not exist')) },
        want: { ids: undefined },
      },
    ],
    [
      'poll: submitted is queued',
      {
        given: { read: 'poll', answer: ok(task({ task_status: 'submitted' })) },
        want: { state: 'running', progress: 0 },
      },
    ],
    [
      'poll: processing is running',
      {
        given: { read: 'poll', answer: ok(task({ task_status: 'processing' })) },
        want: { state: 'running', progress: 0 },
      },
    ],
    [
      'poll: succeed gives every video url',
      {
        given: {
          read: 'poll',
          answer: ok(
            task({
              task_status: 'succeed',
              task_result: {
                videos: [
                  { id: 'v1', url: CLIP, duration: '5' },
                  { id: 'v2', url: CLIP2, duration: '5' },
                ],
              },
            }),
          ),
        },
        want: { state: 'succeeded', links: [CLIP, CLIP2] },
      },
    ],
    [
      'poll: failed with task_status_msg, the task id taken out',
      {
        given: {
          read: 'poll',
          answer: ok(
            task({ task_status: 'failed', task_status_msg: `Failure to pass the risk control system (task ${id})` }),
          ),
        },
        want: { state: 'failed', reason: 'Failure to pass the risk control system (task )' },
      },
    ],
    [
      'poll: a 2xx carrying a refusal code ends the job as Kling said',
      {
        given: { read: 'poll', answer: ok(envelope(1201, 'Invalid request parameters')) },
        want: { state: 'failed', reason: 'Invalid request parameters' },
      },
    ],
    [
      'poll: a 2xx carrying 5001 is a failure of that poll (the server)',
      {
        given: { read: 'poll', answer: ok(envelope(5001, 'Server temporarily unavailable')) },
        want: { failure: 'server', reason: 'Server temporarily unavailable' },
      },
    ],
    [
      'poll: a task_status the specification does not list is unmapped',
      { given: { read: 'poll', answer: ok(task({ task_status: 'paused' })) }, want: { failure: 'protocol' } },
    ],
    [
      'probe: 200 with code 1004 is the key refused',
      {
        given: { read: 'probe', answer: ok(envelope(1004, 'Authorization has expired')) },
        want: { ok: false, outcome: 'key refused' },
      },
    ],
    [
      'probe: 200 with code 0 is the key accepted',
      { given: { read: 'probe', answer: ok(envelope(0, 'SUCCEED', [])) }, want: { ok: true, outcome: 'ok' } },
    ],
  ]);
});

/**
 * MiniMax: platform.minimax.io/docs/api-reference/video/generation/api/openapi.json (create
 * { task_id, base_resp }; query { task_id, status Preparing | Queueing | Processing | Success |
 * Fail, file_id, base_resp }; files/retrieve { file: { download_url }, base_resp }) and
 * platform.minimax.io/docs/api-reference/errorcode.md (base_resp.status_code: 0 success, 1002 rate
 * limit, 1004 not authorized, 1008 insufficient balance, 1026/1027 sensitive, 2013 invalid params).
 * MiniMax answers 200 to nearly everything: the outcome is in base_resp.
 */
describe('minimax', () => {
  const id = '106916112212032';
  const base = (status_code: number, status_msg: string) => ({ base_resp: { status_code, status_msg } });
  const query = (status: string, rest: Record<string, unknown> = {}) => ({
    task_id: id,
    status,
    file_id: '',
    ...rest,
    ...base(0, 'success'),
  });
  table('minimax', 'https://api.minimax.invalid', { submitPath: '/v1/video_generation', ids: { id } }, [
    [
      'submit: task_id with status_code 0 is the handle',
      { given: { read: 'submit', answer: ok({ task_id: id, ...base(0, 'success') }) }, want: { ids: { id } } },
    ],
    [
      'submit: 200 carrying 1002 (rate limit) is busy',
      {
        given: { read: 'submit', answer: ok({ task_id: '', ...base(1002, 'rate limit exceeded') }) },
        want: { failure: 'busy', reason: 'rate limit exceeded' },
      },
    ],
    [
      'submit: 200 carrying 1004 (not authorized) is the operator key',
      {
        given: { read: 'submit', answer: ok({ task_id: '', ...base(1004, 'login fail') }) },
        want: { failure: 'unauthorized', reason: 'login fail' },
      },
    ],
    [
      'submit: 200 carrying 1008 (insufficient balance) is the operator account',
      {
        given: { read: 'submit', answer: ok({ task_id: '', ...base(1008, 'insufficient balance') }) },
        want: { failure: 'unauthorized', reason: 'insufficient balance' },
      },
    ],
    [
      'submit: 200 carrying 1026 (input sensitive) refuses the request',
      {
        given: { read: 'submit', answer: ok({ task_id: '', ...base(1026, 'input new_sensitive') }) },
        want: { failure: 'rejected', reason: 'input new_sensitive' },
      },
    ],
    [
      'submit: status_code 0 with an empty task_id is the protocol broken',
      { given: { read: 'submit', answer: ok({ task_id: '', ...base(0, 'success') }) }, want: { failure: 'protocol' } },
    ],
    [
      'submit: a 503 is the server',
      { given: { read: 'submit', answer: answer(503, undefined) }, want: { failure: 'server', status: 503 } },
    ],
    [
      'poll: Preparing is queued',
      { given: { read: 'poll', answer: ok(query('Preparing')) }, want: { state: 'running', progress: 0 } },
    ],
    [
      'poll: Queueing is queued',
      { given: { read: 'poll', answer: ok(query('Queueing')) }, want: { state: 'running', progress: 0 } },
    ],
    [
      'poll: Processing is running',
      { given: { read: 'poll', answer: ok(query('Processing')) }, want: { state: 'running', progress: 0 } },
    ],
    [
      'poll: Success names a file: the follow-up needs its file_id',
      {
        given: { read: 'poll', answer: ok(query('Success', { file_id: '205258526306433' })) },
        want: { state: 'follow', captured: { fileId: '205258526306433' } },
      },
    ],
    [
      'poll: Fail with 1027 (output sensitive) ends the job with MiniMax reason',
      {
        given: { read: 'poll', answer: ok({ task_id: id, status: 'Fail', ...base(1027, 'output video sensitive') }) },
        want: { state: 'failed', reason: 'output video sensitive' },
      },
    ],
    [
      'poll: 200 carrying 1002 is busy (that poll fails, the job lives on)',
      {
        given: { read: 'poll', answer: ok(base(1002, 'rate limit exceeded')) },
        want: { failure: 'busy', reason: 'rate limit exceeded' },
      },
    ],
    [
      'poll: a status the API reference does not list is unmapped',
      { given: { read: 'poll', answer: ok(query('Paused')) }, want: { failure: 'protocol' } },
    ],
    [
      'result: files/retrieve gives file.download_url',
      {
        given: {
          read: 'result',
          answer: ok({
            file: { file_id: 205258526306433, bytes: 0, filename: 'output_aigc.mp4', download_url: CLIP },
            ...base(0, 'success'),
          }),
        },
        want: { links: [CLIP] },
      },
    ],
    [
      'result: 200 carrying 2013 (invalid file_id) is a failure, not a link',
      {
        given: { read: 'result', answer: ok(base(2013, 'invalid file_id')) },
        want: { failure: 'rejected', reason: 'invalid file_id' },
      },
    ],
    [
      'probe: 200 with 2013 for a made-up task is the key accepted',
      { given: { read: 'probe', answer: ok(base(2013, 'invalid task_id')) }, want: { ok: true, outcome: 'ok' } },
    ],
    [
      'probe: 200 with 1004 is the key refused',
      { given: { read: 'probe', answer: ok(base(1004, 'login fail')) }, want: { ok: false, outcome: 'key refused' } },
    ],
  ]);
});

/**
 * DashScope: github:dashscope/dashscope-sdk-python dashscope/aigc/video_synthesis.py and
 * dashscope/client/base_api.py ({ request_id, output: { task_id, task_status, video_url, code,
 * message } }), Model Studio's Wan video API reference (alibabacloud.com/help/en/model-studio:
 * task_status PENDING, RUNNING, SUSPENDED, SUCCEEDED, FAILED, CANCELED, UNKNOWN; errors
 * { request_id, code, message } by HTTP status; cancel only while PENDING, else
 * UnsupportedOperation). DashScope sends no error in a 200 answer.
 */
describe('dashscope', () => {
  const id = '0385dc79-5ff8-4d82-bcb6-8d4b8c4b2a51';
  const task = (task_status: string, rest: Record<string, unknown> = {}) => ({
    request_id: 'e5d70b02-ebd3-98ce-9fe8-759d7d7b107d',
    output: { task_id: id, task_status, ...rest },
  });
  const error = (code: string, message: string) => ({ request_id: 'e5d70b02', code, message });
  table(
    'dashscope',
    'https://dashscope.invalid',
    { submitPath: '/api/v1/services/aigc/video-generation/video-synthesis', ids: { id } },
    [
      [
        'submit: output.task_id is the handle',
        { given: { read: 'submit', answer: ok(task('PENDING')) }, want: { ids: { id } } },
      ],
      [
        'submit: 400 InvalidParameter refuses the request',
        {
          given: { read: 'submit', answer: answer(400, error('InvalidParameter', 'The size is not supported')) },
          want: { failure: 'rejected', status: 400, reason: 'The size is not supported' },
        },
      ],
      [
        'submit: 401 InvalidApiKey is the operator key',
        {
          given: { read: 'submit', answer: answer(401, error('InvalidApiKey', 'Invalid API-key provided.')) },
          want: { failure: 'unauthorized', status: 401, reason: 'Invalid API-key provided.' },
        },
      ],
      [
        'submit: 403 AccessDenied is a refusal of the request',
        {
          given: {
            read: 'submit',
            answer: answer(403, error('AccessDenied', 'current user api does not support synchronous calls')),
          },
          want: { failure: 'rejected', status: 403, reason: 'current user api does not support synchronous calls' },
        },
      ],
      [
        'submit: 429 Throttling.RateQuota with Retry-After is busy',
        {
          given: {
            read: 'submit',
            answer: answer(429, error('Throttling.RateQuota', 'Requests rate limit exceeded'), { 'retry-after': '7' }),
          },
          want: { failure: 'busy', status: 429, retryAfterMs: 7_000, reason: 'Requests rate limit exceeded' },
        },
      ],
      [
        'submit: 500 InternalError is the server',
        {
          given: { read: 'submit', answer: answer(500, error('InternalError', 'An internal error has occured')) },
          want: { failure: 'server', status: 500, reason: 'An internal error has occured' },
        },
      ],
      [
        'poll: PENDING is queued',
        { given: { read: 'poll', answer: ok(task('PENDING')) }, want: { state: 'running', progress: 0 } },
      ],
      [
        'poll: SUSPENDED (held back by the platform) is queued',
        { given: { read: 'poll', answer: ok(task('SUSPENDED')) }, want: { state: 'running', progress: 0 } },
      ],
      [
        'poll: RUNNING',
        { given: { read: 'poll', answer: ok(task('RUNNING')) }, want: { state: 'running', progress: 0 } },
      ],
      [
        'poll: SUCCEEDED gives output.video_url',
        {
          given: { read: 'poll', answer: ok(task('SUCCEEDED', { video_url: CLIP })) },
          want: { state: 'succeeded', links: [CLIP] },
        },
      ],
      [
        'poll: FAILED with output.message',
        {
          given: {
            read: 'poll',
            answer: ok(
              task('FAILED', {
                code: 'DataInspectionFailed',
                message: 'Output data may contain inappropriate content.',
              }),
            ),
          },
          want: { state: 'failed', reason: 'Output data may contain inappropriate content.' },
        },
      ],
      [
        'poll: CANCELED is canceled',
        { given: { read: 'poll', answer: ok(task('CANCELED')) }, want: { state: 'canceled' } },
      ],
      [
        'poll: UNKNOWN (expired, or never existed) is left unmapped: a protocol failure',
        { given: { read: 'poll', answer: ok(task('UNKNOWN')) }, want: { failure: 'protocol' } },
      ],
      [
        'cancel: 200 while PENDING stops the task',
        { given: { read: 'cancel', answer: ok({ request_id: 'e5d70b02' }) }, want: { cancel: 'canceled' } },
      ],
      [
        'cancel: 400 UnsupportedOperation (past PENDING) is refused: the job runs on, nothing fails',
        {
          given: {
            read: 'cancel',
            answer: answer(
              400,
              error(
                'UnsupportedOperation',
                'Failed to cancel the task, please confirm if the task is in PENDING status.',
              ),
            ),
          },
          want: { cancel: 'refused' },
        },
      ],
      [
        'cancel: 401 is a failure of the cancel (the key)',
        {
          given: { read: 'cancel', answer: answer(401, error('InvalidApiKey', 'Invalid API-key provided.')) },
          want: { failure: 'unauthorized', status: 401, reason: 'Invalid API-key provided.' },
        },
      ],
      [
        'probe: 200 UNKNOWN for a made-up task is the key accepted',
        { given: { read: 'probe', answer: ok(task('UNKNOWN')) }, want: { ok: true, outcome: 'ok' } },
      ],
    ],
  );
});

/**
 * Ark: github:volcengine/volcengine-python-sdk volcenginesdkarkruntime/types/content_generation/
 * content_generation_task.py (id, status, content.video_url, error { code, message }), Ark's API
 * reference (volcengine.com/docs/82379/1521309 query: queued, running, succeeded, failed,
 * cancelled, expired; 1521720: DELETE cancels a queued task, a running one cannot be) and its error
 * codes page ({ error: { code, message, param, type } }). Ark sends no error in a 200 answer.
 */
describe('ark', () => {
  const id = 'cgt-20250331175019-68d9t';
  const task = (status: string, rest: Record<string, unknown> = {}) => ({
    id,
    model: 'seedance-1-0-pro-250528',
    status,
    ...rest,
    created_at: 1743414619,
    updated_at: 1743414673,
  });
  const error = (code: string, message: string, type: string) => ({ error: { code, message, param: '', type } });
  table('ark', 'https://ark.invalid', { submitPath: '/api/v3/contents/generations/tasks', ids: { id } }, [
    ['submit: { id } is the handle', { given: { read: 'submit', answer: ok({ id }) }, want: { ids: { id } } }],
    [
      'submit: 400 InputTextSensitiveContentDetected refuses the request',
      {
        given: {
          read: 'submit',
          answer: answer(
            400,
            error(
              'InputTextSensitiveContentDetected',
              'The request failed because the input text may contain sensitive information.',
              'BadRequest',
            ),
          ),
        },
        want: {
          failure: 'rejected',
          status: 400,
          reason: 'The request failed because the input text may contain sensitive information.',
        },
      },
    ],
    [
      'submit: 401 AuthenticationError is the operator key',
      {
        given: {
          read: 'submit',
          answer: answer(401, error('AuthenticationError', 'The API key is invalid.', 'Unauthorized')),
        },
        want: { failure: 'unauthorized', status: 401, reason: 'The API key is invalid.' },
      },
    ],
    [
      'submit: 429 ServerOverloaded with Retry-After is busy',
      {
        given: {
          read: 'submit',
          answer: answer(429, error('ServerOverloaded', 'The service is overloaded.', 'TooManyRequests'), {
            'retry-after': '60',
          }),
        },
        want: { failure: 'busy', status: 429, retryAfterMs: 60_000, reason: 'The service is overloaded.' },
      },
    ],
    [
      'submit: 500 InternalServiceError is the server',
      {
        given: {
          read: 'submit',
          answer: answer(500, error('InternalServiceError', 'Internal error.', 'InternalServerError')),
        },
        want: { failure: 'server', status: 500, reason: 'Internal error.' },
      },
    ],
    ['poll: queued', { given: { read: 'poll', answer: ok(task('queued')) }, want: { state: 'running', progress: 0 } }],
    [
      'poll: running',
      { given: { read: 'poll', answer: ok(task('running')) }, want: { state: 'running', progress: 0 } },
    ],
    [
      'poll: succeeded gives content.video_url',
      {
        given: { read: 'poll', answer: ok(task('succeeded', { content: { video_url: CLIP } })) },
        want: { state: 'succeeded', links: [CLIP] },
      },
    ],
    [
      'poll: failed (output moderated) with error.message',
      {
        given: {
          read: 'poll',
          answer: ok(
            task('failed', {
              error: {
                code: 'OutputVideoSensitiveContentDetected',
                message: 'The output video may contain sensitive information.',
              },
            }),
          ),
        },
        want: { state: 'failed', reason: 'The output video may contain sensitive information.' },
      },
    ],
    [
      'poll: expired (Ark own execution_expires_after) ends the job as failed',
      {
        given: { read: 'poll', answer: ok(task('expired')) },
        want: { state: 'failed', reason: 'The provider reported the generation failed.' },
      },
    ],
    [
      'poll: cancelled is canceled',
      { given: { read: 'poll', answer: ok(task('cancelled')) }, want: { state: 'canceled' } },
    ],
    [
      'poll: a status the reference does not list is unmapped',
      { given: { read: 'poll', answer: ok(task('paused')) }, want: { failure: 'protocol' } },
    ],
    ['cancel: 200 {} stops a queued task', { given: { read: 'cancel', answer: ok({}) }, want: { cancel: 'canceled' } }],
    [
      'cancel: 400 for a running task is refused: the job runs on, nothing fails',
      {
        given: {
          read: 'cancel',
          answer: answer(
            400,
            error('InvalidParameter', 'A running task cannot be cancelled or deleted.', 'BadRequest'),
          ),
        },
        want: { cancel: 'refused' },
      },
    ],
    [
      'cancel: 404 has nothing to stop',
      {
        given: {
          read: 'cancel',
          answer: answer(404, error('ResourceNotFound', 'The task was not found.', 'NotFound')),
        },
        want: { cancel: 'gone' },
      },
    ],
    [
      'cancel: 429 is a failure of the cancel (busy)',
      {
        given: {
          read: 'cancel',
          answer: answer(429, error('RateLimitExceeded', 'Too many requests.', 'TooManyRequests')),
        },
        want: { failure: 'busy', status: 429, reason: 'Too many requests.' },
      },
    ],
  ]);
});
