import { describe, expect, it } from 'vitest';
import { catalogue } from '../../../generated/catalogue.js';
import { providerProfile, type ProviderProfile } from '../../../generated/provider-profiles.js';
import type { DeploymentJob } from '../../../runtime/deployments/deployment.js';
import { UpstreamError } from '../../../runtime/deployments/upstream-error.js';
import {
  profileRequest,
  type ProfileOperation,
  type RequestContext,
} from '../../../runtime/upstreams/profile-request.js';

/**
 * runtime/upstreams/profile-request.ts: each vendor profile's requests (spec/providers/<vendor>.yaml)
 * as the vendor's published API asks for them. The source of each vendor's table is cited above it;
 * the rows are what that source says a request looks like, not what the profile says.
 */

const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);
const TEXT = 'vendor_b/family_c-2.6/text-to-video';
const IMAGE = 'vendor_b/family_c-2.6/image-to-video';
const FRAME = 'https://media.example/first-frame.png';
const LAST = 'https://media.example/last-frame.png';

function job(model: string, input: Record<string, unknown>, extra: Partial<DeploymentJob> = {}): DeploymentJob {
  return { taskId: 'task_0001', model: catalogue.get(model)!.info, input, ...extra };
}
const text = (upstreamModel: string, input: Record<string, unknown> = {}, extra: Partial<DeploymentJob> = {}) =>
  job(
    TEXT,
    { prompt: 'a red kite over the sea', aspect_ratio: '16:9', duration_seconds: 5, ...input },
    {
      upstreamModel,
      ...extra,
    },
  );
const image = (upstreamModel: string, input: Record<string, unknown> = {}) =>
  job(IMAGE, { prompt: 'the kite lifts off', image_url: FRAME, duration_seconds: 5, ...input }, { upstreamModel });
const handle = (id: string, submitPath = '/unused') => ({ submitPath, ids: { id } });
/** A reference-to-video model every one of MiniMax, DashScope and Ark serves (the references optional). */
const REFERENCE = 'vendor_a/family_a-2.0-fast/reference-to-video';
const reference = (upstreamModel: string, input: Record<string, unknown> = {}) =>
  job(REFERENCE, { prompt: 'character1 flies the kite', ...input }, { upstreamModel });
const REF_IMAGES = ['https://media.example/ref-1.png', 'https://media.example/ref-2.png'];
const REF_VIDEO = 'https://media.example/ref-clip.mp4';

/** The request as the wire sees it (what errors call it is the driver's). */
function sent(profile: ProviderProfile, op: ProfileOperation, context: RequestContext) {
  const { method, url, headers, body } = profileRequest(profile, op, context);
  return { method, url, headers, ...(body !== undefined ? { body } : {}) };
}

type Want = { method: string; url: string; headers: Record<string, string>; body?: unknown } | { throws: string };
type Row = [string, { given: ProfileOperation; want: Want }];

function table(vendor: string, context: RequestContext, rows: Row[]) {
  const profile = providerProfile(vendor)!;
  it.each(rows)('%s', (_, { given, want }) => {
    if ('throws' in want) {
      let failure: unknown;
      try {
        profileRequest(profile, given, context);
      } catch (error) {
        failure = error;
      }
      expect(failure).toBeInstanceOf(UpstreamError);
      expect((failure as UpstreamError).failure).toBe(want.throws);
    } else expect(sent(profile, given, context)).toEqual(want);
  });
}

/**
 * Runway: github:runwayml/sdk-node 4.12.0, src/client.ts (Authorization: Bearer, X-Runway-Version
 * 2024-11-06), src/resources/text-to-video.ts and image-to-video.ts (model, promptText, ratio in
 * pixels, duration; promptImage [{ uri, position }]), src/resources/tasks.ts (GET and DELETE
 * /v1/tasks/{id}).
 */
describe('runway', () => {
  const base = 'https://api.runway.invalid';
  const auth = { 'X-Runway-Version': '2024-11-06', Authorization: 'Bearer key_runway' };
  const json = { ...auth, 'Content-Type': 'application/json' };
  table('runway', { baseUrl: `${base}/`, apiKey: 'key_runway', now: NOW }, [
    [
      'text-to-video: POST /v1/text_to_video, the ratio in pixels',
      {
        given: { operation: 'submit', job: text('gen4.5', { seed: 7 }) },
        want: {
          method: 'POST',
          url: `${base}/v1/text_to_video`,
          headers: json,
          body: { model: 'gen4.5', promptText: 'a red kite over the sea', ratio: '1280:720', duration: 5, seed: 7 },
        },
      },
    ],
    [
      'image-to-video: POST /v1/image_to_video, the frames as promptImage by position',
      {
        given: { operation: 'submit', job: image('gen4_turbo', { last_image_url: LAST }) },
        want: {
          method: 'POST',
          url: `${base}/v1/image_to_video`,
          headers: json,
          body: {
            model: 'gen4_turbo',
            promptText: 'the kite lifts off',
            promptImage: [
              { uri: FRAME, position: 'first' },
              { uri: LAST, position: 'last' },
            ],
            ratio: '1280:720',
            duration: 5,
          },
        },
      },
    ],
    [
      'a value Runway has no counterpart for is refused before anything is sent',
      { given: { operation: 'submit', job: text('gen4.5', { shot_type: 'multi' }) }, want: { throws: 'rejected' } },
    ],
    [
      'poll: GET /v1/tasks/{id}, no body',
      {
        given: { operation: 'poll', job: text('gen4.5'), handle: handle('2b6e1c4e-0c7a-4b7e-9d55-8d0f5a2c9e11') },
        want: { method: 'GET', url: `${base}/v1/tasks/2b6e1c4e-0c7a-4b7e-9d55-8d0f5a2c9e11`, headers: auth },
      },
    ],
    [
      'cancel: DELETE /v1/tasks/{id}',
      {
        given: { operation: 'cancel', job: text('gen4.5'), handle: handle('2b6e1c4e') },
        want: { method: 'DELETE', url: `${base}/v1/tasks/2b6e1c4e`, headers: auth },
      },
    ],
    [
      'probe: a task id that exists nowhere',
      {
        given: { operation: 'probe' },
        want: { method: 'GET', url: `${base}/v1/tasks/00000000-0000-0000-0000-000000000000`, headers: auth },
      },
    ],
  ]);
});

/**
 * Luma: github:lumalabs/lumaai-node src/index.ts (Bearer auth token, base .../dream-machine/v1),
 * src/resources/generations/generations.ts (POST /generations/video { model, prompt, aspect_ratio,
 * resolution, duration "5s", keyframes { frame0, frame1 } }; GET /generations/{id}). No cancel.
 */
describe('luma', () => {
  const base = 'https://api.luma.invalid/dream-machine/v1';
  const auth = { Authorization: 'Bearer luma-key' };
  table('luma', { baseUrl: base, apiKey: 'luma-key', now: NOW }, [
    [
      'text-to-video: POST /generations/video, the duration as "5s"',
      {
        given: { operation: 'submit', job: text('ray-2', { resolution: '720p' }) },
        want: {
          method: 'POST',
          url: `${base}/generations/video`,
          headers: { ...auth, 'Content-Type': 'application/json' },
          body: {
            model: 'ray-2',
            prompt: 'a red kite over the sea',
            aspect_ratio: '16:9',
            resolution: '720p',
            duration: '5s',
          },
        },
      },
    ],
    [
      'image-to-video: the same path, the frames as keyframes frame0 and frame1',
      {
        given: { operation: 'submit', job: image('ray-flash-2', { last_image_url: LAST }) },
        want: {
          method: 'POST',
          url: `${base}/generations/video`,
          headers: { ...auth, 'Content-Type': 'application/json' },
          body: {
            model: 'ray-flash-2',
            prompt: 'the kite lifts off',
            duration: '5s',
            keyframes: { frame0: { type: 'image', url: FRAME }, frame1: { type: 'image', url: LAST } },
          },
        },
      },
    ],
    [
      'poll: GET /generations/{id}',
      {
        given: { operation: 'poll', job: text('ray-2'), handle: handle('d1968551-6113-4b46-b567-09210c2e79b0') },
        want: { method: 'GET', url: `${base}/generations/d1968551-6113-4b46-b567-09210c2e79b0`, headers: auth },
      },
    ],
    [
      'no cancel: Luma cannot stop a generation',
      { given: { operation: 'cancel', job: text('ray-2'), handle: handle('d1968551') }, want: { throws: 'protocol' } },
    ],
  ]);
});

/**
 * Kling: the "Kling AI API Specification" (app.klingai.com/global/dev/document-api), General
 * Information (a JWT sent as Bearer) and Video Generation (POST /v1/videos/text2video | image2video
 * { model_name, prompt, image, image_tail, aspect_ratio, duration as text, external_task_id };
 * GET /v1/videos/<action>/{id}, id the task_id or the external_task_id). No cancel.
 */
describe('kling', () => {
  const base = 'https://api.kling.invalid';
  const token = 'eyJhbGciOiJIUzI1NiJ9.e30.c2lnbmF0dXJl';
  const auth = { Authorization: `Bearer ${token}` };
  table('kling', { baseUrl: base, apiKey: 'ak:sk', token, now: NOW }, [
    [
      'text-to-video: POST /v1/videos/text2video, the duration as text, the task id as external_task_id',
      {
        given: { operation: 'submit', job: text('kling-v2-1') },
        want: {
          method: 'POST',
          url: `${base}/v1/videos/text2video`,
          headers: { ...auth, 'Content-Type': 'application/json' },
          body: {
            model_name: 'kling-v2-1',
            prompt: 'a red kite over the sea',
            aspect_ratio: '16:9',
            duration: '5',
            external_task_id: 'task_0001',
          },
        },
      },
    ],
    [
      'image-to-video: POST /v1/videos/image2video with image and image_tail',
      {
        given: { operation: 'submit', job: image('kling-v2-5-turbo', { last_image_url: LAST }) },
        want: {
          method: 'POST',
          url: `${base}/v1/videos/image2video`,
          headers: { ...auth, 'Content-Type': 'application/json' },
          body: {
            model_name: 'kling-v2-5-turbo',
            prompt: 'the kite lifts off',
            image: FRAME,
            image_tail: LAST,
            duration: '5',
            external_task_id: 'task_0001',
          },
        },
      },
    ],
    [
      'lookup after an unknown outcome: the action path and the external_task_id',
      {
        given: { operation: 'lookup', job: text('kling-v2-1'), submitPath: '/v1/videos/text2video' },
        want: { method: 'GET', url: `${base}/v1/videos/text2video/task_0001`, headers: auth },
      },
    ],
    [
      'poll: the submit action path and the task_id',
      {
        given: {
          operation: 'poll',
          job: image('kling-v2-1'),
          handle: handle('CjMkZmYDbwUAAAAAAJqMZQ', '/v1/videos/image2video'),
        },
        want: { method: 'GET', url: `${base}/v1/videos/image2video/CjMkZmYDbwUAAAAAAJqMZQ`, headers: auth },
      },
    ],
    [
      'probe: the task list, one item a page',
      {
        given: { operation: 'probe' },
        want: { method: 'GET', url: `${base}/v1/videos/text2video?pageNum=1&pageSize=1`, headers: auth },
      },
    ],
    [
      'no cancel: Kling cannot stop a task',
      { given: { operation: 'cancel', job: text('kling-v2-1'), handle: handle('Cj') }, want: { throws: 'protocol' } },
    ],
  ]);
});

/**
 * MiniMax: platform.minimax.io/docs/api-reference/video/generation/api/openapi.json (POST
 * /v1/video_generation { model, prompt, first_frame_image, duration, resolution "768P" }; GET
 * /v1/query/video_generation?task_id=; GET /v1/files/retrieve?file_id=) and
 * github:MiniMax-AI/MiniMax-MCP-JS (Bearer key). No cancel.
 */
describe('minimax', () => {
  const base = 'https://api.minimax.invalid';
  const auth = { Authorization: 'Bearer mm-key' };
  table('minimax', { baseUrl: base, apiKey: 'mm-key', now: NOW }, [
    [
      'text-to-video: POST /v1/video_generation, the resolution with a capital P',
      {
        given: {
          operation: 'submit',
          job: job(
            TEXT,
            { prompt: 'a red kite over the sea', duration_seconds: 5, resolution: '768p' },
            {
              upstreamModel: 'MiniMax-Hailuo-02',
            },
          ),
        },
        want: {
          method: 'POST',
          url: `${base}/v1/video_generation`,
          headers: { ...auth, 'Content-Type': 'application/json' },
          body: { model: 'MiniMax-Hailuo-02', prompt: 'a red kite over the sea', duration: 5, resolution: '768P' },
        },
      },
    ],
    [
      'image-to-video: the same path, the frame as first_frame_image',
      {
        given: { operation: 'submit', job: image('MiniMax-Hailuo-02') },
        want: {
          method: 'POST',
          url: `${base}/v1/video_generation`,
          headers: { ...auth, 'Content-Type': 'application/json' },
          body: {
            model: 'MiniMax-Hailuo-02',
            prompt: 'the kite lifts off',
            first_frame_image: FRAME,
            duration: 5,
          },
        },
      },
    ],
    [
      'reference-to-video without references: the prompt alone (MiniMax takes no reference lists)',
      {
        given: { operation: 'submit', job: reference('MiniMax-Hailuo-02') },
        want: {
          method: 'POST',
          url: `${base}/v1/video_generation`,
          headers: { ...auth, 'Content-Type': 'application/json' },
          body: { model: 'MiniMax-Hailuo-02', prompt: 'character1 flies the kite' },
        },
      },
    ],
    [
      'reference-to-video with reference images: refused before anything is sent',
      {
        given: { operation: 'submit', job: reference('MiniMax-Hailuo-02', { reference_image_urls: REF_IMAGES }) },
        want: { throws: 'rejected' },
      },
    ],
    [
      'poll: the query by task_id',
      {
        given: { operation: 'poll', job: text('MiniMax-Hailuo-02'), handle: handle('106916112212032') },
        want: { method: 'GET', url: `${base}/v1/query/video_generation?task_id=106916112212032`, headers: auth },
      },
    ],
    [
      'result: files/retrieve by the file_id the succeeded poll gave',
      {
        given: {
          operation: 'result',
          job: text('MiniMax-Hailuo-02'),
          handle: handle('106916112212032'),
          captured: { fileId: '205258526306433' },
        },
        want: { method: 'GET', url: `${base}/v1/files/retrieve?file_id=205258526306433`, headers: auth },
      },
    ],
    [
      'result without a file_id: a protocol failure, not a request',
      {
        given: { operation: 'result', job: text('MiniMax-Hailuo-02'), handle: handle('1069'), captured: {} },
        want: { throws: 'protocol' },
      },
    ],
  ]);
});

/**
 * DashScope: github:dashscope/dashscope-sdk-python dashscope/aigc/video_synthesis.py ({ model,
 * input { prompt, img_url, ... }, parameters { resolution, duration, seed, ... } }) and
 * dashscope/client/base_api.py (X-DashScope-Async: enable; GET /api/v1/tasks/{task_id}; POST
 * /api/v1/tasks/{task_id}/cancel).
 */
describe('dashscope', () => {
  const base = 'https://dashscope.invalid';
  const auth = { 'X-DashScope-Async': 'enable', Authorization: 'Bearer sk-ds' };
  const json = { ...auth, 'Content-Type': 'application/json' };
  table('dashscope', { baseUrl: base, apiKey: 'sk-ds', now: NOW }, [
    [
      'text-to-video: what describes the clip in input, how to make it in parameters',
      {
        given: { operation: 'submit', job: text('wan2.5-t2v-preview', { resolution: '1080p', seed: 42 }) },
        want: {
          method: 'POST',
          url: `${base}/api/v1/services/aigc/video-generation/video-synthesis`,
          headers: json,
          body: {
            model: 'wan2.5-t2v-preview',
            input: { prompt: 'a red kite over the sea' },
            parameters: { resolution: '1080P', ratio: '16:9', duration: 5, seed: 42 },
          },
        },
      },
    ],
    [
      'image-to-video: the frame as input.img_url',
      {
        given: { operation: 'submit', job: image('wan2.5-i2v-preview') },
        want: {
          method: 'POST',
          url: `${base}/api/v1/services/aigc/video-generation/video-synthesis`,
          headers: json,
          body: {
            model: 'wan2.5-i2v-preview',
            input: { prompt: 'the kite lifts off', img_url: FRAME },
            parameters: { duration: 5 },
          },
        },
      },
    ],
    [
      'reference-to-video: the reference clips as input.reference_video_urls',
      {
        given: { operation: 'submit', job: reference('wan2.6-r2v', { reference_video_urls: [REF_VIDEO] }) },
        want: {
          method: 'POST',
          url: `${base}/api/v1/services/aigc/video-generation/video-synthesis`,
          headers: json,
          body: {
            model: 'wan2.6-r2v',
            input: { prompt: 'character1 flies the kite', reference_video_urls: [REF_VIDEO] },
          },
        },
      },
    ],
    [
      'poll: GET /api/v1/tasks/{task_id}',
      {
        given: { operation: 'poll', job: text('wan'), handle: handle('0385dc79-5ff8-4d82-bcb6-8d4b8c4b2a51') },
        want: { method: 'GET', url: `${base}/api/v1/tasks/0385dc79-5ff8-4d82-bcb6-8d4b8c4b2a51`, headers: auth },
      },
    ],
    [
      'cancel: POST .../cancel with an empty JSON body',
      {
        given: { operation: 'cancel', job: text('wan'), handle: handle('0385dc79') },
        want: { method: 'POST', url: `${base}/api/v1/tasks/0385dc79/cancel`, headers: json, body: {} },
      },
    ],
  ]);
});

/**
 * Ark: github:volcengine/volcengine-python-sdk volcenginesdkarkruntime/resources/content_generation/
 * tasks.py and types/content_generation/create_task_content_param.py (content items { type: text }
 * | { type: image_url, image_url: { url }, role }), Ark's API reference (volcengine.com/docs/82379/
 * 1520757: execution_expires_after 3600..259200 seconds; 1521309 query; 1521720 cancel or delete).
 */
describe('ark', () => {
  const base = 'https://ark.invalid';
  const auth = { Authorization: 'Bearer ark-key' };
  const json = { ...auth, 'Content-Type': 'application/json' };
  table('ark', { baseUrl: base, apiKey: 'ark-key', now: NOW }, [
    [
      'text-to-video: content[] of a text item; an hour left is told as Ark takes it (3600 at least)',
      {
        given: {
          operation: 'submit',
          job: text('seedance-1-0-pro-250528', { resolution: '720p' }, { deadlineAt: NOW + 600_000 }),
        },
        want: {
          method: 'POST',
          url: `${base}/api/v3/contents/generations/tasks`,
          headers: json,
          body: {
            model: 'seedance-1-0-pro-250528',
            content: [{ type: 'text', text: 'a red kite over the sea' }],
            ratio: '16:9',
            resolution: '720p',
            duration: 5,
            execution_expires_after: 3600,
          },
        },
      },
    ],
    [
      'image-to-video: the frames as image_url items with their roles; a long deadline capped at 259200',
      {
        given: {
          operation: 'submit',
          job: {
            ...image('seedance-1-0-pro-250528', { last_image_url: LAST }),
            deadlineAt: NOW + 400_000_000,
          },
        },
        want: {
          method: 'POST',
          url: `${base}/api/v3/contents/generations/tasks`,
          headers: json,
          body: {
            model: 'seedance-1-0-pro-250528',
            content: [
              { type: 'text', text: 'the kite lifts off' },
              { type: 'image_url', image_url: { url: FRAME }, role: 'first_frame' },
              { type: 'image_url', image_url: { url: LAST }, role: 'last_frame' },
            ],
            duration: 5,
            execution_expires_after: 259200,
          },
        },
      },
    ],
    [
      'reference-to-video: each reference image and clip as its own item with its role',
      {
        given: {
          operation: 'submit',
          job: reference('seedance-1-0-lite-i2v', {
            reference_image_urls: REF_IMAGES,
            reference_video_urls: [REF_VIDEO],
          }),
        },
        want: {
          method: 'POST',
          url: `${base}/api/v3/contents/generations/tasks`,
          headers: json,
          body: {
            model: 'seedance-1-0-lite-i2v',
            content: [
              { type: 'text', text: 'character1 flies the kite' },
              { type: 'image_url', image_url: { url: REF_IMAGES[0] }, role: 'reference_image' },
              { type: 'image_url', image_url: { url: REF_IMAGES[1] }, role: 'reference_image' },
              { type: 'video_url', video_url: { url: REF_VIDEO }, role: 'reference_video' },
            ],
          },
        },
      },
    ],
    [
      'poll: GET .../tasks/{id}',
      {
        given: { operation: 'poll', job: text('seedance'), handle: handle('cgt-20250331175019-68d9t') },
        want: {
          method: 'GET',
          url: `${base}/api/v3/contents/generations/tasks/cgt-20250331175019-68d9t`,
          headers: auth,
        },
      },
    ],
    [
      'cancel: DELETE .../tasks/{id}',
      {
        given: { operation: 'cancel', job: text('seedance'), handle: handle('cgt-20250331175019-68d9t') },
        want: {
          method: 'DELETE',
          url: `${base}/api/v3/contents/generations/tasks/cgt-20250331175019-68d9t`,
          headers: auth,
        },
      },
    ],
    [
      'probe: the task list, one item a page',
      {
        given: { operation: 'probe' },
        want: { method: 'GET', url: `${base}/api/v3/contents/generations/tasks?page_num=1&page_size=1`, headers: auth },
      },
    ],
  ]);
});
