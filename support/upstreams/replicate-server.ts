import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { echoAsked, echoText } from './key-echo.js';
import {
  answerSubmitSpecial,
  clockOf,
  LoopbackServer,
  sendClip,
  sendJson,
  type SubmitSpecial,
  type TimelineOptions,
} from './loopback-upstream.js';

/**
 * A loopback server speaking Replicate's HTTP API as Replicate publishes it (replicate.com/docs,
 * replicate-javascript lib/predictions.js, lib/webhooks.js, index.d.ts), written from that
 * protocol, not from the adapter:
 * - POST /v1/models/{owner}/{name}/predictions ({ input }) or POST /v1/predictions
 *   ({ version, input }), `Authorization: Bearer ...`: 201 with the prediction (status starting,
 *   urls.get, urls.cancel); `Cancel-After` (e.g. "90s") sets its deadline: canceled if it was
 *   running then, aborted if it had not started; `webhook` + `webhook_events_filter` name where to
 *   POST the prediction when it completes;
 * - GET /v1/predictions/{id}: starting, processing (a progress bar in `logs`), then succeeded with
 *   `output` a replicate.delivery-style link that is gone (404) once it expired, or failed with
 *   `error`;
 * - POST /v1/predictions/{id}/cancel: the prediction, canceled;
 * - GET /v1/webhooks/default/secret: { key: "whsec_..." }, the secret webhooks are signed with
 *   (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature "v1,<base64 HMAC-SHA256 of
 *   id.timestamp.body>").
 * Errors are problem details ({ title, detail, status }): 401, 422 with invalid_fields, 429 with
 * Retry-After, 404 for an unknown prediction.
 */
export interface ReplicateServerOptions {
  /** From create to the end (default 200 ms): the first fifth starting, the rest processing. */
  latencyMs?: number;
  /** One prediction's own clock (starting, processing, how long its output link answers), from its create body: ./loopback-upstream.ts. */
  clockFor?: TimelineOptions['clockFor'];
  /** The token a request must carry as Bearer (default: any). */
  apiKey?: string;
  /** The answer to a create instead of creating: a status with a problem body (and Retry-After), or `reset`. */
  submit?: (index: number, body: ReplicateReceived['body']) => SubmitSpecial;
  /** A prediction whose prompt contains this fails, as a flagged input does. */
  failWhenPromptContains?: string;
  /** GET /v1/predictions/{id} answers 404 for every prediction (Replicate lost them). */
  forgetPredictions?: boolean;
  /** How long an output link answers after the prediction succeeded (default an hour, as replicate.delivery). */
  outputLifetimeMs?: number;
  /** A key-echoing upstream (./key-echo.ts): a prompt asking for it gets the Authorization header written back in a problem's `detail` or a failed prediction's `error`. */
  echoKey?: boolean;
  /**
   * Every prediction is canceled on Replicate's side this long after it was created, as its owner
   * can from replicate.com or another client with the same token (no request of the service's):
   * it then reads `canceled` like one the service canceled.
   */
  canceledElsewhereAfterMs?: number;
  /** A cancel is answered 200 with the prediction as it stands, which runs on to its end (a provider that could not stop it). */
  cancelIgnored?: boolean;
  /** While a prediction runs, GET answers this status value instead of `starting` or `processing` (a value Replicate's documentation does not list). */
  unknownStatus?: string;
  /** `output` is a list of this many links (a model whose output is a list; a hostile one answering 300) instead of one link. */
  outputLinks?: number;
}

export interface ReplicateReceived {
  path: string;
  authorization: string | undefined;
  cancelAfter: string | undefined;
  body: { version?: string; input?: Record<string, unknown>; webhook?: string; webhook_events_filter?: string[] };
}

interface Prediction {
  id: string;
  model: string;
  version: string;
  input: Record<string, unknown>;
  /** The create's body, as received. */
  body: ReplicateReceived['body'];
  createdAt: number;
  /** The Cancel-After deadline (ms since the epoch). */
  deadline?: number;
  canceledAt?: number;
  webhook?: string;
}

/** Replicate's Cancel-After: a duration with unit suffixes (90s, 5m, 1h30m); seconds when it has none. */
function durationMs(text: string): number | undefined {
  let total = 0;
  const parts = [...text.matchAll(/(\d+)(h|m|s)?/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) return undefined;
  for (const [, value, unit] of parts)
    total += Number(value) * (unit === 'h' ? 3_600_000 : unit === 'm' ? 60_000 : 1000);
  return total;
}

export class ReplicateServer extends LoopbackServer {
  readonly submits: ReplicateReceived[] = [];
  readonly predictions = new Map<string, Prediction>();
  /** Prediction ids a cancel reached while they still ran. */
  readonly cancels: string[] = [];
  /** Webhooks this server sent (their signed headers too, so that a test can replay one) and the status each got. */
  readonly webhooks: { url: string; status: number; body: string; headers: Record<string, string> }[] = [];
  /** GET /v1/predictions/{id}: the polls of a prediction. */
  polls = 0;
  /** The account's webhook signing secret. */
  readonly signingSecret = `whsec_${randomBytes(24).toString('base64')}`;
  secretFetches = 0;
  downloads = 0;

  constructor(private readonly options: ReplicateServerOptions = {}) {
    super();
  }

  get baseUrl(): string {
    return `${this.url}/v1`;
  }

  /** Standard Webhooks headers for a body, signed with this account's secret (or another, to forge). */
  sign(body: string, secret = this.signingSecret, at = new Date()): Record<string, string> {
    const id = `msg_${randomBytes(12).toString('hex')}`;
    const timestamp = String(Math.floor(at.getTime() / 1000));
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
    return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
  }

  private json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    sendJson(response, status, body, {
      'content-type': status >= 400 ? 'application/problem+json' : 'application/json',
      ...headers,
    });
  }

  private problem(
    response: ServerResponse,
    status: number,
    title: string,
    detail: string,
    headers: Record<string, string> = {},
  ): void {
    this.json(response, status, { title, detail, status }, headers);
  }

  /** A prediction's clock: starting for the first fifth of its latency unless its own clock says otherwise. */
  private clock(p: Prediction): { latencyMs: number; startingMs: number; outputLifetimeMs: number } {
    const server: TimelineOptions = {
      latencyMs: this.options.latencyMs ?? 200,
      resultLifetimeMs: this.options.outputLifetimeMs ?? 3_600_000,
      clockFor: this.options.clockFor,
    };
    const own = clockOf(p, server);
    const latencyMs = own.latencyMs ?? 200;
    return {
      latencyMs,
      startingMs: own.queuedMs ?? latencyMs / 5,
      outputLifetimeMs: own.resultLifetimeMs ?? 3_600_000,
    };
  }

  private status(p: Prediction): 'starting' | 'processing' | 'succeeded' | 'failed' | 'canceled' | 'aborted' {
    const { latencyMs: latency, startingMs } = this.clock(p);
    const now = Date.now();
    const startsAt = p.createdAt + startingMs;
    const endsAt = p.createdAt + latency;
    const canceledAt = p.canceledAt ?? Infinity;
    const deadline = p.deadline ?? Infinity;
    const stoppedAt = Math.min(canceledAt, deadline);
    // Replicate: `aborted` is a prediction its deadline stopped before it started; a cancel is always `canceled`.
    if (stoppedAt <= now && stoppedAt < endsAt)
      return deadline < canceledAt && deadline < startsAt ? 'aborted' : 'canceled';
    if (now < startsAt) return 'starting';
    if (now < endsAt) return 'processing';
    const trigger = this.options.failWhenPromptContains;
    return trigger !== undefined && String(p.input.prompt ?? '').includes(trigger) ? 'failed' : 'succeeded';
  }

  /** A prediction's status as GET answers it (undefined for an id it does not know). */
  statusOf(id: string) {
    const p = this.predictions.get(id);
    return p && this.status(p);
  }

  private object(p: Prediction) {
    const { latencyMs: latency, startingMs } = this.clock(p);
    const status = this.status(p);
    const done = Math.floor(Math.min(100, ((Date.now() - p.createdAt) * 100) / latency));
    const started = status !== 'starting' && status !== 'aborted';
    return {
      id: p.id,
      model: p.model,
      version: p.version,
      input: p.input,
      logs:
        status === 'processing' || status === 'succeeded'
          ? `Loading weights\n${String(done).padStart(3)}%|${'#'.repeat(Math.floor(done / 10)).padEnd(10)}| ${done}/100`
          : '',
      output: status === 'succeeded' ? this.output(p) : null,
      error:
        status === 'failed'
          ? `Prediction ${p.id} failed: The input or output was flagged as sensitive. Please try again with different inputs. (E005)`
          : null,
      status:
        (status === 'starting' || status === 'processing') && this.options.unknownStatus !== undefined
          ? this.options.unknownStatus
          : status,
      source: 'api',
      data_removed: false,
      created_at: new Date(p.createdAt).toISOString(),
      started_at: started ? new Date(p.createdAt + startingMs).toISOString() : null,
      completed_at: ['succeeded', 'failed', 'canceled', 'aborted'].includes(status) ? new Date().toISOString() : null,
      urls: {
        get: `${this.baseUrl}/predictions/${p.id}`,
        cancel: `${this.baseUrl}/predictions/${p.id}/cancel`,
        web: `https://replicate.com/p/${p.id}`,
      },
      metrics: {},
    };
  }

  private output(p: Prediction): string | string[] {
    const links = this.options.outputLinks;
    if (links === undefined) return `${this.url}/delivery/${p.id}/output.mp4`;
    return Array.from({ length: links }, (_, i) => `${this.url}/delivery/${p.id}/output-${i}.mp4`);
  }

  protected async handle(request: IncomingMessage, response: ServerResponse, url: URL, raw: Buffer): Promise<void> {
    const delivery = /^\/delivery\/([^/]+)\/output(?:-\d+)?\.mp4$/.exec(url.pathname);
    if (delivery) return this.download(response, this.predictions.get(delivery[1]));
    const unauthorized =
      this.options.apiKey !== undefined && request.headers.authorization !== `Bearer ${this.options.apiKey}`;
    const create = /^\/v1\/(?:models\/([^/]+)\/([^/]+)\/)?predictions$/.exec(url.pathname);
    // A create is recorded even when its token is refused: what reached the server is what a test counts.
    if (request.method === 'POST' && create)
      return this.create(
        request,
        response,
        raw,
        create[1] && create[2] ? `${create[1]}/${create[2]}` : undefined,
        unauthorized,
      );
    if (unauthorized)
      return this.problem(response, 401, 'Unauthenticated', 'You did not pass a valid authentication token');
    // The key's account (replicate-javascript accounts.current()).
    if (request.method === 'GET' && url.pathname === '/v1/account')
      return this.json(response, 200, { type: 'organization', username: 'acme', name: 'Acme', github_url: null });
    if (request.method === 'GET' && url.pathname === '/v1/webhooks/default/secret') {
      this.secretFetches++;
      return this.json(response, 200, { key: this.signingSecret });
    }
    const one = /^\/v1\/predictions\/([^/]+)(\/cancel)?$/.exec(url.pathname);
    const p = one ? this.predictions.get(one[1]) : undefined;
    if (!one || !p || (this.options.forgetPredictions && !one[2]))
      return this.problem(response, 404, 'Not found', 'Not found.');
    if (one[2] && request.method === 'POST') {
      if (['starting', 'processing'].includes(this.status(p))) {
        if (!this.options.cancelIgnored) p.canceledAt = Date.now();
        this.cancels.push(p.id);
      }
      return this.json(response, 200, this.object(p));
    }
    const echo = this.options.echoKey ? echoAsked(p.input.prompt) : undefined;
    if (!one[2] && request.method === 'GET' && echo?.place === 'poll-unauthorized')
      return this.problem(response, 401, 'Unauthenticated', echoText(request.headers.authorization, echo.form));
    if (!one[2] && request.method === 'GET' && echo?.place === 'status' && this.status(p) === 'succeeded')
      return this.json(response, 200, {
        ...this.object(p),
        status: 'failed',
        output: null,
        error: echoText(request.headers.authorization, echo.form),
      });
    if (!one[2] && request.method === 'GET') {
      this.polls++;
      return this.json(response, 200, this.object(p));
    }
    this.problem(response, 405, 'Method not allowed', 'Method not allowed.');
  }

  private create(
    request: IncomingMessage,
    response: ServerResponse,
    raw: Buffer,
    model: string | undefined,
    unauthorized: boolean,
  ) {
    const index = this.submits.length;
    const body = JSON.parse(raw.toString('utf8') || '{}') as ReplicateReceived['body'];
    const cancelAfter = request.headers['cancel-after'] as string | undefined;
    this.submits.push({
      path: new URL(request.url ?? '/', this.url).pathname,
      authorization: request.headers.authorization,
      cancelAfter,
      body,
    });
    if (unauthorized)
      return this.problem(response, 401, 'Unauthenticated', 'You did not pass a valid authentication token');
    const echo = this.options.echoKey ? echoAsked(body.input?.prompt) : undefined;
    if (echo?.place === 'submit')
      return this.problem(response, 422, 'Input validation failed', echoText(request.headers.authorization, echo.form));
    if (echo?.place === 'unauthorized')
      return this.problem(response, 401, 'Unauthenticated', echoText(request.headers.authorization, echo.form));
    const special = this.options.submit?.(index, body);
    const refusal = (status: number) => ({ title: 'Error', detail: 'refused', status });
    if (answerSubmitSpecial(request, special, refusal, (...answer) => this.json(response, ...answer))) return;
    if (!model && !body.version)
      return this.problem(response, 422, 'Input validation failed', '- version: version is required');
    if (cancelAfter !== undefined && durationMs(cancelAfter) === undefined)
      return this.problem(response, 400, 'Invalid Cancel-After', `Cancel-After "${cancelAfter}" is not a duration`);
    const now = Date.now();
    const p: Prediction = {
      id: randomBytes(13)
        .toString('hex')
        .slice(0, 26)
        .replace(/[0-9]/g, (d) => 'abcdefghij'[Number(d)]),
      model: model ?? 'owner/from-version',
      version: body.version ?? 'hidden',
      input: body.input ?? {},
      body,
      createdAt: now,
      ...(this.options.canceledElsewhereAfterMs !== undefined
        ? { canceledAt: now + this.options.canceledElsewhereAfterMs }
        : {}),
      ...(cancelAfter !== undefined ? { deadline: now + durationMs(cancelAfter)! } : {}),
      ...(body.webhook && (body.webhook_events_filter ?? ['start', 'output', 'logs', 'completed']).includes('completed')
        ? { webhook: body.webhook }
        : {}),
    };
    this.predictions.set(p.id, p);
    if (p.webhook) this.webhookWhenDone(p);
    this.json(response, 201, this.object(p));
  }

  /** As Replicate does on `completed`: the prediction POSTed to the webhook, signed with Standard Webhooks. */
  private webhookWhenDone(p: Prediction): void {
    this.listener.later(this.clock(p).latencyMs + 10, () => {
      const body = JSON.stringify(this.object(p));
      const headers = { 'content-type': 'application/json', ...this.sign(body) };
      fetch(p.webhook!, { method: 'POST', headers, body })
        .then((r) => this.webhooks.push({ url: p.webhook!, status: r.status, body, headers }))
        .catch(() => this.webhooks.push({ url: p.webhook!, status: 0, body, headers }));
    });
  }

  /** replicate.delivery: the file while its link lives, then 404. */
  private download(response: ServerResponse, p: Prediction | undefined): void {
    const lifetime = p ? this.clock(p).outputLifetimeMs : 0;
    const endedAt = p ? p.createdAt + this.clock(p).latencyMs : 0;
    if (!p || this.status(p) !== 'succeeded' || Date.now() >= endedAt + lifetime) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
      return;
    }
    this.downloads++;
    sendClip(response, Number(p.input.duration), p.input);
  }
}
