import { randomUUID } from 'node:crypto';
import { createServer, get as httpGet, type IncomingMessage, type ServerResponse } from 'node:http';
import { get as httpsGet } from 'node:https';
import type { AddressInfo } from 'node:net';
import { loopbackTls } from '../loopback-tls.js';
import { askedClip, png } from '../media/fixtures.js';
import { echoAsked, echoText } from './key-echo.js';
import { LoopbackServer, linkAlive, percentOf, phaseOf, sendJson, type TimelineOptions } from './loopback-upstream.js';
import { DownloadLog } from './slow-results.js';

/**
 * A loopback server speaking the jobs protocol as the specification publishes it (and mediaforge's
 * main API answers it): POST /api/v1/jobs/createTask with a Bearer key and an Idempotency-Key (the
 * same key answers the same task), the envelope {code, msg, data}, GET /api/v1/jobs/recordInfo
 * (queued, running with progress, then succeeded with output.assets[].url on its own origin, or
 * failed with an English errorMessage), 404 for a task it does not know, GET /api/v1/jobs (one
 * empty page of the key's tasks). Each behaviour a test
 * needs is a switch; what it received is recorded.
 */
export interface JobsServerOptions {
  /** How long a job runs (default 200 ms). */
  latencyMs?: number;
  /** One job's own clock (how long it stays queued, runs, and its links answer), from its submit body: ./loopback-upstream.ts. */
  clockFor?: TimelineOptions['clockFor'];
  /** The key a request must carry (default: any). */
  apiKey?: string;
  /** The answer to a submit instead of accepting it: a status (and Retry-After), or `reset` (the body read, the connection destroyed); given the submit's index and body. */
  submit?: (
    index: number,
    body: ReceivedSubmit['body'],
  ) => { status: number; retryAfter?: string; msg?: string } | 'reset' | undefined;
  /** A job whose prompt contains this fails with a reason that names the job and an account. */
  failWhenPromptContains?: string;
  /** recordInfo answers 404 for every task (the upstream lost them). */
  forgetTasks?: boolean;
  /** The host result links name instead of 127.0.0.1 (another origin for the same server: `localhost`). */
  resultHost?: string;
  /** The first this many polls are answered 429 with Retry-After: 0. */
  busyPolls?: number;
  /** The answer to a poll instead of the job's state, asked at each poll with the job's prompt (an upstream failing mid-task: 503). */
  pollAnswer?: (
    job: { prompt: string } | undefined,
  ) => { status: number; msg?: string; retryAfter?: string } | undefined;
  /** The state recordInfo reports for a job past its latency instead of its end (a state the protocol does not define: `paused`). */
  endState?: string;
  /** No hints: no Retry-After, and progress stays 0 until the job ends. */
  withoutHints?: boolean;
  /** The first download sends half the bytes, then resets the connection. */
  cutFirstDownload?: boolean;
  /** A key-echoing upstream (./key-echo.ts): a prompt asking for it gets the Authorization header written back in an error (msg or errorMessage). */
  echoKey?: boolean;
  /** The result's declared media type, in recordInfo and on the download (default video/mp4): a page says text/html. */
  resultMime?: string;
  /**
   * Read the job's reference clips (input.reference_video_urls) when it is submitted, as a provider
   * does (https, any certificate); a clip that does not answer 200 fails the job with reference_invalid.
   */
  fetchReferences?: boolean;
  /** Where each submit is named as it arrives ('submit'), beside the events of other test servers. */
  log?: string[];
  /**
   * The result's bytes (default: a real clip as long as the job's duration_seconds, 5 s when it
   * has none), made anew for each download; `download` counts the server's downloads from 1.
   * Streams (support/upstreams/slow-results.ts: drip, endless) are logged in `results`.
   */
  result?: (
    job: { prompt: string; seconds: number; model?: string; input: Record<string, unknown> },
    download: number,
  ) => AsyncIterable<Buffer> | Buffer;
  /** A succeeded task also lists its last frame (a PNG link, image/png) after the video. */
  lastFrameAsset?: boolean;
  /** The last frame's bytes (default: a 64x36 PNG), given the frame's bytes and the server's download count; a stream is logged in `results`. */
  lastFrame?: (frame: Buffer, download: number) => AsyncIterable<Buffer> | Buffer;
  /** A succeeded task lists this many more video links after those (an upstream answering more than the model returns). */
  extraAssets?: number;
}

export interface ReceivedSubmit {
  idempotencyKey: string | undefined;
  authorization: string | undefined;
  body: { model?: string; input?: Record<string, unknown>; callBackUrl?: string };
}

interface Job {
  id: string;
  createdAt: number;
  /** The submit's body, as received. */
  body: ReceivedSubmit['body'];
  prompt: string;
  seconds: number;
  /** The submitted model and input: the default result is the clip they ask for (its frame and container). */
  model?: string;
  input: Record<string, unknown>;
  /** Set once a poll reported the job ended: it no longer counts as in flight. */
  reportedEnd: boolean;
  /** A reference clip it could not read (fetchReferences): the job fails. */
  unreadableReference?: boolean;
}

export class JobsProtocolServer extends LoopbackServer {
  readonly submits: ReceivedSubmit[] = [];
  readonly jobs = new Map<string, Job>();
  private readonly byKey = new Map<string, string>();
  /** Callbacks this server made (to a submit's callBackUrl, when its job ended) and the status each got. */
  readonly callbacks: { url: string; status: number }[] = [];
  /** Most jobs created and not yet reported ended, at any moment. */
  maxInFlight = 0;
  polls = 0;
  downloads = 0;
  /** While true, recordInfo is never answered (an upstream hanging on status requests); the held requests are counted. */
  holdPolls = false;
  /** Status requests held (holdPolls) whose connection is still open, and those the client closed. */
  readonly heldPolls = { open: 0, closedByClient: 0 };
  /** Jobs reported succeeded at least once: the jobs the operator pays the provider for. */
  readonly completed = new Set<string>();
  /** Downloads of a streamed result: open, completed, or cut by the client. */
  readonly results = new DownloadLog();

  constructor(private readonly options: JobsServerOptions = {}) {
    super();
  }

  get baseUrl(): string {
    return `${this.url}/api/v1`;
  }

  private get resultOrigin(): string {
    return this.options.resultHost ? this.url.replace('127.0.0.1', this.options.resultHost) : this.url;
  }

  /** A job's life: running from its creation unless its own clock queues it first. */
  private get timeline(): TimelineOptions {
    return { latencyMs: this.options.latencyMs, queuedMs: 0, clockFor: this.options.clockFor };
  }

  get inFlight(): number {
    return [...this.jobs.values()].filter((j) => !j.reportedEnd).length;
  }

  private envelope(
    response: ServerResponse,
    status: number,
    data: unknown,
    msg = 'success',
    headers: Record<string, string> = {},
  ): void {
    sendJson(
      response,
      status,
      { code: status === 202 ? 200 : status * 100 + 1, msg, data, request_id: `req_${randomUUID()}` },
      headers,
    );
  }

  protected async handle(request: IncomingMessage, response: ServerResponse, url: URL, raw: Buffer): Promise<void> {
    const file = /^\/files\/([^/.]+?)(?:-\d+)?\.(mp4|png)$/.exec(url.pathname);
    if (file) return this.download(response, this.jobs.get(file[1]), file[2]);
    if (this.options.apiKey && request.headers.authorization !== `Bearer ${this.options.apiKey}`)
      return this.envelope(response, 401, null, 'Missing or invalid API key.');
    if (request.method === 'POST' && url.pathname === '/api/v1/jobs/createTask') {
      const index = this.submits.length;
      const body = JSON.parse(raw.toString('utf8') || '{}') as ReceivedSubmit['body'];
      const key = request.headers['idempotency-key'] as string | undefined;
      this.options.log?.push('submit');
      this.submits.push({ idempotencyKey: key, authorization: request.headers.authorization, body });
      const echo = this.options.echoKey ? echoAsked(body.input?.prompt) : undefined;
      if (echo?.place === 'submit' || echo?.place === 'unauthorized')
        return this.envelope(
          response,
          echo.place === 'submit' ? 422 : 401,
          null,
          echoText(request.headers.authorization, echo.form),
        );
      const special = this.options.submit?.(index, body);
      if (special === 'reset') {
        request.socket.destroy();
        return;
      }
      if (special)
        return this.envelope(
          response,
          special.status,
          null,
          special.msg ?? 'refused',
          special.retryAfter ? { 'retry-after': special.retryAfter } : {},
        );
      let id = key ? this.byKey.get(key) : undefined;
      if (!id) {
        id = `task_up${randomUUID().replace(/-/g, '').slice(0, 16)}`;
        const seconds =
          typeof body.input?.duration_seconds === 'number' && body.input.duration_seconds > 0
            ? body.input.duration_seconds
            : 5;
        const clips = this.options.fetchReferences ? body.input?.reference_video_urls : undefined;
        const read = Array.isArray(clips) ? await Promise.all(clips.map((u) => answersOk(String(u)))) : [];
        this.jobs.set(id, {
          id,
          createdAt: Date.now(),
          body,
          prompt: String(body.input?.prompt ?? ''),
          seconds,
          model: body.model,
          input: body.input ?? {},
          reportedEnd: false,
          unreadableReference: read.includes(false),
        });
        if (key) this.byKey.set(key, id);
        this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
        if (body.callBackUrl) this.callBackWhenDone(body.callBackUrl, id);
      }
      return this.envelope(
        response,
        202,
        { taskId: id, state: 'queued' },
        'success',
        this.options.withoutHints ? {} : { 'retry-after': '1' },
      );
    }
    // The key's tasks, one page (the specification's GET /jobs): what a probe reads; nothing is created.
    if (request.method === 'GET' && url.pathname === '/api/v1/jobs')
      return this.envelope(response, 200, { tasks: [], nextCursor: null });
    if (request.method === 'GET' && url.pathname === '/api/v1/jobs/recordInfo') {
      this.polls++;
      if (this.holdPolls) {
        this.heldPolls.open++;
        response.on('close', () => {
          this.heldPolls.open--;
          this.heldPolls.closedByClient++;
        });
        return;
      }
      if (this.polls <= (this.options.busyPolls ?? 0))
        return this.envelope(response, 429, null, 'Too many requests.', { 'retry-after': '0' });
      const job = this.jobs.get(url.searchParams.get('taskId') ?? '');
      const instead = this.options.pollAnswer?.(job && { prompt: job.prompt });
      if (instead)
        return this.envelope(
          response,
          instead.status,
          null,
          instead.msg ?? 'refused',
          instead.retryAfter ? { 'retry-after': instead.retryAfter } : {},
        );
      if (!job || this.options.forgetTasks) return this.envelope(response, 404, null, 'Task not found.');
      const echo = this.options.echoKey ? echoAsked(job.prompt) : undefined;
      if (echo?.place === 'poll-unauthorized')
        return this.envelope(response, 401, null, echoText(request.headers.authorization, echo.form));
      const base = {
        taskId: job.id,
        createdAt: new Date(job.createdAt).toISOString(),
        startedAt: new Date(job.createdAt).toISOString(),
      };
      const phase = phaseOf(job, this.timeline);
      if (phase === 'queued')
        return this.envelope(response, 200, { ...base, startedAt: undefined, state: 'queued', progress: 0 });
      if (phase === 'running')
        return this.envelope(response, 200, {
          ...base,
          state: 'running',
          progress: this.options.withoutHints ? 0 : percentOf(job, this.timeline),
        });
      if (this.options.endState) return this.envelope(response, 200, { ...base, state: this.options.endState });
      job.reportedEnd = true;
      if (echo?.place === 'status')
        return this.envelope(response, 200, {
          ...base,
          state: 'failed',
          errorCode: 'generation_failed',
          errorMessage: echoText(request.headers.authorization, echo.form),
        });
      if (job.unreadableReference)
        return this.envelope(response, 200, {
          ...base,
          state: 'failed',
          errorCode: 'reference_invalid',
          errorMessage: 'A reference video could not be fetched.',
        });
      const trigger = this.options.failWhenPromptContains;
      if (trigger && job.prompt.includes(trigger)) {
        return this.envelope(response, 200, {
          ...base,
          state: 'failed',
          errorCode: 'generation_failed',
          errorMessage: `Content policy violation: the prompt was rejected (job ${job.id}, account acct_upstream12345).`,
        });
      }
      this.completed.add(job.id);
      return this.envelope(response, 200, {
        ...base,
        state: 'succeeded',
        progress: 100,
        output: {
          assets: [
            { url: `${this.resultOrigin}/files/${job.id}.mp4`, mime: this.options.resultMime ?? 'video/mp4' },
            ...(this.options.lastFrameAsset
              ? [{ url: `${this.resultOrigin}/files/${job.id}.png`, mime: 'image/png' }]
              : []),
            ...Array.from({ length: this.options.extraAssets ?? 0 }, (_, i) => ({
              url: `${this.resultOrigin}/files/${job.id}-${i + 1}.mp4`,
              mime: 'video/mp4',
            })),
          ],
        },
      });
    }
    return this.envelope(response, 404, null, 'No such route.');
  }

  /** As the protocol's callBackUrl: one POST with the task's record when it ends (the receiver reads the truth with recordInfo). */
  private callBackWhenDone(url: string, id: string): void {
    this.listener.later((this.options.latencyMs ?? 200) + 10, () => {
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ code: 200, msg: 'success', data: { taskId: id, state: 'succeeded' } }),
      })
        .then((r) => this.callbacks.push({ url, status: r.status }))
        .catch(() => this.callbacks.push({ url, status: 0 }));
    });
  }

  private async download(response: ServerResponse, job: Job | undefined, extension = 'mp4'): Promise<void> {
    // Result links are short-lived (the specification): once the job's lifetime passed, 404.
    if (!job || !linkAlive(job, this.timeline)) {
      response.writeHead(404).end();
      return;
    }
    this.downloads++;
    if (extension === 'png') {
      const frame = png(64, 36, false);
      const bytes = this.options.lastFrame?.(frame, this.downloads) ?? frame;
      response.writeHead(200, {
        'content-type': 'image/png',
        ...(Buffer.isBuffer(bytes) ? { 'content-length': String(bytes.length) } : {}),
      });
      if (Buffer.isBuffer(bytes)) return void response.end(bytes);
      return void (await this.results.send(response, bytes));
    }
    const result =
      this.options.result?.(job, this.downloads) ?? askedClip(job.model, job.input, Math.min(60, job.seconds));
    if (this.options.cutFirstDownload && this.downloads === 1 && Buffer.isBuffer(result)) {
      response.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(result.length) });
      response.write(result.subarray(0, result.length >> 1), () => response.socket?.destroy());
      return;
    }
    response.writeHead(200, {
      'content-type': this.options.resultMime ?? 'video/mp4',
      ...(Buffer.isBuffer(result) ? { 'content-length': String(result.length) } : {}),
    });
    if (Buffer.isBuffer(result)) return void response.end(result);
    await this.results.send(response, result);
  }
}

/**
 * Whether a link answers 200 to a GET (its body read and dropped), as a provider reading a reference
 * finds out. The links are the tests' loopback https listeners: their fixture certificate is the one trusted.
 */
function answersOk(url: string, redirects = 3): Promise<boolean> {
  return new Promise((resolve) => {
    // As a provider: https links (the customer's, on the fixture certificate) and http ones (the
    // service's own on loopback), following a redirect as fetchers do (an S3 store's media link
    // answers 302 to the store).
    const onAnswer = (response: IncomingMessage) => {
      response.resume();
      const location = response.headers.location;
      if (response.statusCode && response.statusCode >= 300 && response.statusCode < 400 && location && redirects > 0) {
        answersOk(new URL(location, url).href, redirects - 1).then(resolve);
        return;
      }
      response.on('end', () => resolve(response.statusCode === 200));
      response.on('error', () => resolve(false));
    };
    const request = url.startsWith('https:')
      ? httpsGet(url, { ca: loopbackTls().cert }, onAnswer)
      : url.startsWith('http:')
        ? httpGet(url, onAnswer)
        : undefined;
    if (!request) resolve(false);
    else request.on('error', () => resolve(false));
  });
}

/** A loopback port nothing listens on (a server opened and closed): connecting to it is refused. */
export async function refusedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/api/v1`;
}
