import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { clipAskedBy } from '../media/fixtures.js';
import { echoAsked, echoText } from './key-echo.js';
import {
  answerSubmitSpecial,
  LoopbackServer,
  linkAlive,
  phaseOf,
  sendJson,
  type SubmitSpecial,
  type TimelineOptions,
} from './loopback-upstream.js';

/**
 * A loopback server speaking fal's queue as fal publishes it (docs.fal.ai, Queue; fal-js
 * libs/client/src/queue.ts and types/common.ts), written from that protocol, not from the adapter:
 * - POST /{owner}/{alias}[/{path}] with `Authorization: Key ...` and a JSON input answers
 *   { request_id, status_url, response_url, cancel_url, queue_position } (IN_QUEUE); a
 *   `fal_webhook` query parameter names where to POST when the request ends;
 * - GET /{owner}/{alias}/requests/{id}/status: 202 IN_QUEUE (queue_position) and IN_PROGRESS
 *   (logs), then 200 COMPLETED (logs, metrics);
 * - GET /{owner}/{alias}/requests/{id}: the result, { video: { url, content_type, file_name,
 *   file_size }, seed }, or the model's refusal: 422 { detail: [{ loc, msg, type }] };
 * - PUT /{owner}/{alias}/requests/{id}/cancel: 202 { status: CANCELLATION_REQUESTED }, or 400
 *   { status: ALREADY_COMPLETED } once the request ended; an unknown id is a 404.
 * Errors before a request exists: 401 for a missing key, 422 validation, 429 with Retry-After.
 * The status has no cancelled value: a cancelled request reads COMPLETED, its result an error.
 * Files (fal's CDN links) answer for a while after the request ended, then 404.
 */
export interface FalServerOptions {
  /** From submit to COMPLETED (default 200 ms): the first third IN_QUEUE, the rest IN_PROGRESS. */
  latencyMs?: number;
  /** One request's own clock (how long it is queued, runs, and its file answers), from its input: ./loopback-upstream.ts. */
  clockFor?: TimelineOptions['clockFor'];
  /**
   * A cancel of an IN_PROGRESS request is answered 202 CANCELLATION_REQUESTED but the request runs
   * to its end: fal only signals a running request, and an app that does not handle the signal
   * finishes (a queued one is always dropped). Default: the app stops.
   */
  runningRunsOn?: boolean;
  /** The key a request must carry as `Authorization: Key <key>` (default: any). */
  apiKey?: string;
  /** The answer to a submit instead of queueing it: a status with a body (and Retry-After), or `reset` (the body read, the connection destroyed). */
  submit?: (index: number, body: Record<string, unknown>) => SubmitSpecial;
  /** A request whose prompt contains this completes with a content-policy refusal (422 at response_url). */
  refuseWhenPromptContains?: string;
  /** The status of every request answers 404 (fal lost them). */
  forgetRequests?: boolean;
  /** A key-echoing upstream (./key-echo.ts): a prompt asking for it gets the Authorization header written back in a `detail` or a COMPLETED request's `error`. */
  echoKey?: boolean;
}

export interface FalReceived {
  path: string;
  authorization: string | undefined;
  requestTimeout: string | undefined;
  webhook: string | null;
  body: Record<string, unknown>;
}

interface FalRequest {
  id: string;
  app: string;
  createdAt: number;
  input: Record<string, unknown>;
  /** The submit's body (fal's input): what a test reads the request's prompt from. */
  body: Record<string, unknown>;
  canceled: boolean;
  /** When a cancel reached it (a running one that ran on keeps it unset in `canceled`). */
  canceledAt?: number;
}

export class FalQueueServer extends LoopbackServer {
  readonly submits: FalReceived[] = [];
  readonly requests = new Map<string, FalRequest>();
  /** Request ids a PUT cancel reached while they still ran. */
  readonly cancels: string[] = [];
  /** Request ids a PUT cancel reached while running that ran on (runningRunsOn). */
  readonly cancelsRunOn: string[] = [];
  /** Webhooks this server sent (to a submit's fal_webhook when its request ended) and the status each got. */
  readonly webhooks: { url: string; status: number }[] = [];
  statusPolls = 0;
  downloads = 0;

  constructor(private readonly options: FalServerOptions = {}) {
    super();
  }

  /** fal's queue lives at the root of its host (queue.fal.run). */
  get baseUrl(): string {
    return this.url;
  }

  private json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    sendJson(response, status, body, { 'x-fal-request-id': randomUUID(), ...headers });
  }

  private get timeline(): TimelineOptions {
    return { latencyMs: this.options.latencyMs ?? 200, queuedShare: 1 / 3, clockFor: this.options.clockFor };
  }

  private stateOf(request: FalRequest): 'IN_QUEUE' | 'IN_PROGRESS' | 'COMPLETED' {
    if (request.canceled) return 'COMPLETED';
    const phase = phaseOf(request, this.timeline);
    return phase === 'queued' ? 'IN_QUEUE' : phase === 'running' ? 'IN_PROGRESS' : 'COMPLETED';
  }

  private urls(request: FalRequest) {
    const base = `${this.url}/${request.app.split('/').slice(0, 2).join('/')}/requests/${request.id}`;
    return { response_url: base, status_url: `${base}/status`, cancel_url: `${base}/cancel` };
  }

  private refused(request: FalRequest): boolean {
    const trigger = this.options.refuseWhenPromptContains;
    return trigger !== undefined && String(request.input.prompt ?? '').includes(trigger);
  }

  protected async handle(request: IncomingMessage, response: ServerResponse, url: URL, raw: Buffer): Promise<void> {
    if (url.pathname.startsWith('/files/'))
      return this.download(response, this.requests.get(url.pathname.slice('/files/'.length, -'.mp4'.length)));
    const unauthorized =
      this.options.apiKey !== undefined && request.headers.authorization !== `Key ${this.options.apiKey}`;
    const refuseKey = () => this.json(response, 401, { detail: 'No user found for Key ID and Secret' });
    const match = /^\/[^/]+\/[^/]+\/requests\/([^/]+)(\/status|\/cancel)?$/.exec(url.pathname);
    if (match)
      return unauthorized
        ? refuseKey()
        : this.requestRoute(request, response, this.requests.get(decodeURIComponent(match[1])), match[2]);
    if (request.method !== 'POST') return this.json(response, 404, { detail: 'Not Found' });
    const index = this.submits.length;
    const input = JSON.parse(raw.toString('utf8') || '{}') as Record<string, unknown>;
    const webhook = url.searchParams.get('fal_webhook');
    this.submits.push({
      path: url.pathname,
      authorization: request.headers.authorization,
      requestTimeout: request.headers['x-fal-request-timeout'] as string | undefined,
      webhook,
      body: input,
    });
    if (unauthorized) return refuseKey();
    const echo = this.options.echoKey ? echoAsked(input.prompt) : undefined;
    if (echo?.place === 'submit')
      return this.json(response, 422, {
        detail: [
          { loc: ['body', 'prompt'], msg: echoText(request.headers.authorization, echo.form), type: 'value_error' },
        ],
      });
    if (echo?.place === 'unauthorized')
      return this.json(response, 401, { detail: echoText(request.headers.authorization, echo.form) });
    const special = this.options.submit?.(index, input);
    const refusal = () => ({ detail: 'refused' });
    if (answerSubmitSpecial(request, special, refusal, (...answer) => this.json(response, ...answer))) return;
    const queued: FalRequest = {
      id: randomUUID(),
      app: url.pathname.slice(1),
      createdAt: Date.now(),
      input,
      body: input,
      canceled: false,
    };
    this.requests.set(queued.id, queued);
    if (webhook) this.webhookWhenDone(webhook, queued);
    return this.json(response, 200, {
      status: 'IN_QUEUE',
      request_id: queued.id,
      gateway_request_id: queued.id,
      queue_position: 0,
      ...this.urls(queued),
    });
  }

  private requestRoute(
    request: IncomingMessage,
    response: ServerResponse,
    queued: FalRequest | undefined,
    suffix: string | undefined,
  ) {
    if (!queued || (this.options.forgetRequests && suffix === '/status'))
      return this.json(response, 404, { detail: 'Request not found' });
    const state = this.stateOf(queued);
    if (suffix === '/cancel' && request.method === 'PUT') {
      if (state === 'COMPLETED') return this.json(response, 400, { status: 'ALREADY_COMPLETED' });
      if (state === 'IN_PROGRESS' && this.options.runningRunsOn) {
        this.cancelsRunOn.push(queued.id);
        return this.json(response, 202, { status: 'CANCELLATION_REQUESTED' });
      }
      queued.canceled = true;
      queued.canceledAt = Date.now();
      this.cancels.push(queued.id);
      return this.json(response, 202, { status: 'CANCELLATION_REQUESTED' });
    }
    const echo = this.options.echoKey ? echoAsked(queued.input.prompt) : undefined;
    if (suffix === '/status' && request.method === 'GET') {
      this.statusPolls++;
      if (echo?.place === 'poll-unauthorized')
        return this.json(response, 401, { detail: echoText(request.headers.authorization, echo.form) });
      const logs = [{ message: 'Generating', level: 'INFO', source: 'USER', timestamp: new Date().toISOString() }];
      if (state === 'IN_QUEUE')
        return this.json(response, 202, {
          status: state,
          request_id: queued.id,
          queue_position: 0,
          ...this.urls(queued),
        });
      if (state === 'IN_PROGRESS')
        return this.json(response, 202, { status: state, request_id: queued.id, logs, ...this.urls(queued) });
      return this.json(response, 200, {
        status: state,
        request_id: queued.id,
        logs,
        ...(echo?.place === 'status'
          ? { error: echoText(request.headers.authorization, echo.form), error_type: 'request_error' }
          : {}),
        metrics: { inference_time: (this.options.latencyMs ?? 200) / 1000 },
        ...this.urls(queued),
      });
    }
    if (!suffix && request.method === 'GET') {
      if (state !== 'COMPLETED') return this.json(response, 400, { detail: 'Request is still in progress' });
      if (queued.canceled) return this.json(response, 400, { detail: 'Request was cancelled' });
      if (this.refused(queued)) {
        return this.json(response, 422, {
          detail: [
            {
              loc: ['body', 'prompt'],
              msg: 'The content could not be processed because it contained material flagged by a content checker.',
              type: 'content_policy_violation',
            },
          ],
        });
      }
      const bytes = this.bytesOf(queued);
      return this.json(response, 200, {
        video: {
          url: `${this.url}/files/${queued.id}.mp4`,
          content_type: 'video/mp4',
          file_name: 'output.mp4',
          file_size: bytes.length,
        },
        seed: 42,
      });
    }
    this.json(response, 405, { detail: 'Method Not Allowed' });
  }

  /** The clip: as long as the input's `duration` (fal's text), 5 s without one. */
  private bytesOf(queued: FalRequest): Buffer {
    const seconds = Number(queued.input.duration);
    return clipAskedBy(queued.input, Number.isFinite(seconds) && seconds > 0 ? seconds : 5);
  }

  /** As fal does once a request ends: one POST to fal_webhook with { request_id, gateway_request_id, status, payload }. */
  private webhookWhenDone(url: string, queued: FalRequest): void {
    this.listener.later((this.options.latencyMs ?? 200) + 10, () => {
      const refused = this.refused(queued);
      const body = {
        request_id: queued.id,
        gateway_request_id: queued.id,
        status: refused ? 'ERROR' : 'OK',
        payload: refused ? null : { video: { url: `${this.url}/files/${queued.id}.mp4` } },
        ...(refused ? { error: 'Invalid status code: 422' } : {}),
      };
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
        .then((r) => this.webhooks.push({ url, status: r.status }))
        .catch(() => this.webhooks.push({ url, status: 0 }));
    });
  }

  private download(response: ServerResponse, queued: FalRequest | undefined): void {
    if (!queued || this.stateOf(queued) !== 'COMPLETED' || queued.canceled || !linkAlive(queued, this.timeline)) {
      response.writeHead(404).end();
      return;
    }
    this.downloads++;
    const bytes = this.bytesOf(queued);
    response.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(bytes.length) });
    response.end(bytes);
  }
}
