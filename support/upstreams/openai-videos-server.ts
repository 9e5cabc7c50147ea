import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { clipAskedBy } from '../media/fixtures.js';
import { echoAsked, echoText } from './key-echo.js';
import {
  LoopbackServer,
  linkAlive,
  percentOf,
  phaseOf,
  type Special,
  sendJson,
  sendSpecial,
  type TimelineOptions,
} from './loopback-upstream.js';

/**
 * A loopback server speaking OpenAI's Videos API as openai-node publishes it (resources/videos.ts):
 * POST /v1/videos (multipart/form-data) answers a Video in `queued`; GET /v1/videos/{id} moves it
 * through in_progress (with progress) to completed or failed ({error: {code, message}}); GET
 * /v1/videos/{id}/content answers the MP4 bytes; DELETE /v1/videos/{id} answers
 * {id, object: 'video.deleted', deleted: true}; an unknown id is a 404 in OpenAI's error shape.
 * A Video's `expires_at` says until when its content downloads; after it, /content is a 404.
 * OpenAI's Videos API has no cancel and no cancelled status: DELETE removes a video in any state.
 */
export interface OpenAiServerOptions {
  latencyMs?: number;
  /** One video's own clock (queued, in progress, how long its content answers), from its form: ./loopback-upstream.ts. */
  clockFor?: TimelineOptions['clockFor'];
  /** The key a request must carry as Bearer (default: any); otherwise 401 invalid_api_key. */
  apiKey?: string;
  /** The answer to a create instead of creating a video (OpenAI's error shape: 429 rate_limit_exceeded, 400 moderation_blocked ...). */
  submit?: (index: number, body: Record<string, unknown>) => Special;
  /** A video whose prompt contains this ends `failed`, its error OpenAI's moderation code. */
  failWhenPromptContains?: string;
  /** GET /v1/videos/{id} answers 404 for every video (the upstream lost them). */
  forgetVideos?: boolean;
  /** A key-echoing upstream (./key-echo.ts): a prompt asking for it gets the Authorization header written back in an error's message or a failed Video's error. */
  echoKey?: boolean;
  /** A submit is answered only this long after the video is created (a slow upstream: the client may give up first). */
  submitDelayMs?: number;
  /** With submitDelayMs: the slow submit creates no video (the upstream dropped it), and still answers late. */
  slowSubmitsCreateNothing?: boolean;
}

interface Video {
  id: string;
  createdAt: number;
  form: Map<string, string[]>;
  /** The form as one object (each field's first value): what a test reads the video's prompt from. */
  body: Record<string, string>;
  deleted: boolean;
}

export class OpenAiVideosServer extends LoopbackServer {
  readonly videos = new Map<string, Video>();
  readonly deletes: string[] = [];
  /** Every create's form (as one object), refused or not. */
  readonly submits: Record<string, string>[] = [];

  constructor(private readonly options: OpenAiServerOptions = {}) {
    super();
  }

  get baseUrl(): string {
    return `${this.url}/v1`;
  }

  private json(response: ServerResponse, status: number, body: unknown): void {
    sendJson(response, status, body);
  }

  private notFound(response: ServerResponse): void {
    this.json(response, 404, {
      error: { message: 'Video not found.', type: 'invalid_request_error', param: 'video_id', code: 'not_found' },
    });
  }

  /** Queued for no time unless the video's own clock says so, then in progress until latencyMs. */
  private get timeline(): TimelineOptions {
    return { latencyMs: this.options.latencyMs ?? 200, queuedMs: 0, clockFor: this.options.clockFor };
  }

  private failed(video: Video): boolean {
    const trigger = this.options.failWhenPromptContains;
    return trigger !== undefined && (video.form.get('prompt')?.[0] ?? '').includes(trigger);
  }

  private object(video: Video) {
    const phase = phaseOf(video, this.timeline);
    const done = phase === 'ended';
    const failed = done && this.failed(video);
    const clock = { latencyMs: 200, resultLifetimeMs: 86_400_000, ...this.timeline, ...this.options.clockFor?.(video) };
    const endedAt = video.createdAt + clock.latencyMs;
    return {
      id: video.id,
      object: 'video',
      model: video.form.get('model')?.[0] ?? '',
      status: failed ? 'failed' : done ? 'completed' : phase === 'queued' ? 'queued' : 'in_progress',
      progress: done ? 100 : phase === 'queued' ? 0 : percentOf(video, this.timeline),
      created_at: Math.floor(video.createdAt / 1000),
      completed_at: done ? Math.floor(endedAt / 1000) : null,
      expires_at: done && !failed ? Math.floor((endedAt + clock.resultLifetimeMs) / 1000) : null,
      prompt: video.form.get('prompt')?.[0] ?? null,
      seconds: video.form.get('seconds')?.[0] ?? '4',
      size: '1280x720',
      error: failed
        ? { code: 'moderation_blocked', message: 'Your request was blocked by our moderation system.' }
        : null,
      remixed_from_video_id: null,
    };
  }

  protected async handle(request: IncomingMessage, response: ServerResponse, url: URL, body: Buffer): Promise<void> {
    const match = /^\/v1\/videos(?:\/([^/]+)(\/content)?)?$/.exec(url.pathname);
    if (!match) return this.notFound(response);
    const [, id, content] = match;
    if (this.options.apiKey !== undefined && request.headers.authorization !== `Bearer ${this.options.apiKey}`) {
      if (request.method === 'POST' && !id) this.submits.push({});
      return this.json(response, 401, {
        error: {
          message: 'Incorrect API key provided.',
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_api_key',
        },
      });
    }
    // The list (openai-node videos.list()): one page of the videos not deleted, newest first.
    if (request.method === 'GET' && !id) {
      const data = [...this.videos.values()].filter((v) => !v.deleted).map((v) => this.object(v));
      return this.json(response, 200, { object: 'list', data: data.reverse(), has_more: false });
    }
    if (request.method === 'POST' && !id) {
      const form = await new Request(url, {
        method: 'POST',
        headers: { 'content-type': request.headers['content-type'] ?? '' },
        body: new Uint8Array(body),
      }).formData();
      const fields = new Map<string, string[]>();
      form.forEach((value, key) => fields.set(key, [...(fields.get(key) ?? []), String(value)]));
      const asObject = Object.fromEntries([...fields].map(([key, values]) => [key, values[0]]));
      const index = this.submits.length;
      this.submits.push(asObject);
      if (sendSpecial(request, response, this.options.submit?.(index, asObject))) return;
      const echo = this.options.echoKey ? echoAsked(fields.get('prompt')?.[0]) : undefined;
      if (echo?.place === 'submit' || echo?.place === 'unauthorized')
        return this.json(response, echo.place === 'submit' ? 400 : 401, {
          error: {
            message: echoText(request.headers.authorization, echo.form),
            type: 'invalid_request_error',
            param: null,
            code: echo.place === 'submit' ? 'invalid_value' : 'invalid_api_key',
          },
        });
      const video: Video = {
        id: `video_${randomUUID().replace(/-/g, '')}`,
        createdAt: Date.now(),
        form: fields,
        body: asObject,
        deleted: false,
      };
      const delay = this.options.submitDelayMs ?? 0;
      if (!(delay > 0 && this.options.slowSubmitsCreateNothing)) this.videos.set(video.id, video);
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      if (response.destroyed) return;
      return this.json(response, 200, this.object(video));
    }
    const video = id ? this.videos.get(decodeURIComponent(id)) : undefined;
    if (!video || video.deleted) return this.notFound(response);
    if (request.method === 'DELETE' && !content) {
      video.deleted = true;
      this.deletes.push(video.id);
      return this.json(response, 200, { id: video.id, object: 'video.deleted', deleted: true });
    }
    if (request.method === 'GET' && this.options.forgetVideos) return this.notFound(response);
    const echo = this.options.echoKey ? echoAsked(video.form.get('prompt')?.[0]) : undefined;
    if (request.method === 'GET' && !content && echo?.place === 'poll-unauthorized')
      return this.json(response, 401, {
        error: {
          message: echoText(request.headers.authorization, echo.form),
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_api_key',
        },
      });
    if (request.method === 'GET' && !content && echo?.place === 'status' && this.object(video).status === 'completed')
      return this.json(response, 200, {
        ...this.object(video),
        status: 'failed',
        error: { code: 'internal_error', message: echoText(request.headers.authorization, echo.form) },
      });
    if (request.method === 'GET' && !content) return this.json(response, 200, this.object(video));
    if (request.method === 'GET' && content) {
      if (this.object(video).status !== 'completed')
        return this.json(response, 404, {
          error: { message: 'Video is not ready.', type: 'invalid_request_error', param: null, code: 'not_found' },
        });
      if (!linkAlive(video, this.timeline))
        return this.json(response, 404, {
          error: {
            message: 'Video content has expired.',
            type: 'invalid_request_error',
            param: null,
            code: 'not_found',
          },
        });
      const bytes = clipAskedBy(Object.fromEntries(video.form), Number(video.form.get('seconds')?.[0] ?? 4));
      response.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(bytes.length) });
      return void response.end(bytes);
    }
    this.notFound(response);
  }
}
