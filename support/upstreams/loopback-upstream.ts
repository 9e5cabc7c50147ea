import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { clipAskedBy } from '../media/fixtures.js';

/**
 * What every loopback upstream of support/upstreams/ shares (the four coded protocols' servers and
 * the vendors' in vendors/), and nothing of any protocol: a listener on 127.0.0.1 that hands each
 * request, its body read, to one handler and clears its timers when it closes; JSON and clip
 * answers; the special answers a test asks for (a status, a reset connection); a job's life as a
 * timeline (queued, then running, then ended) measured from its creation, and how long its result
 * links answer. Each server keeps only its protocol: paths, envelopes, states, error bodies. The
 * key echo is ./key-echo.ts, the log of streamed downloads ./slow-results.ts.
 */
export type Phase = 'queued' | 'running' | 'ended' | 'canceled';

export interface TimelineOptions {
  /** From create to the end (default 200 ms). */
  latencyMs?: number;
  /** The share of latencyMs spent queued before running (default 0.3). */
  queuedShare?: number;
  /** How long the job is queued, in ms (instead of queuedShare). */
  queuedMs?: number;
  /** How long a result link answers after the job ended (default a day, as these vendors' links). */
  resultLifetimeMs?: number;
  /**
   * One job's own clock over these, from what it was created with (its body): lets one server run
   * a quick job and a slow one side by side, as a vendor does, so that one service's scenarios can
   * share it (test/deployments/behaviour/).
   */
  clockFor?: (job: TimelineJob & { body?: unknown }) => TimelineOptions | undefined;
}

export interface TimelineJob {
  id: string;
  createdAt: number;
  canceledAt?: number;
}

/** The options as they hold for this job (its own clock over the server's). */
export function clockOf(job: TimelineJob, options: TimelineOptions): TimelineOptions {
  const own = options.clockFor?.(job);
  return own ? { ...options, ...own } : options;
}

export function phaseOf(job: TimelineJob, server: TimelineOptions, now = Date.now()): Phase {
  const options = clockOf(job, server);
  const latency = options.latencyMs ?? 200;
  if (job.canceledAt !== undefined && job.canceledAt <= now) return 'canceled';
  if (now < job.createdAt + (options.queuedMs ?? latency * (options.queuedShare ?? 0.3))) return 'queued';
  if (now < job.createdAt + latency) return 'running';
  return 'ended';
}

/** Whole percent of the way from start to end (0 while queued, 100 once ended). */
export function percentOf(job: TimelineJob, server: TimelineOptions, now = Date.now()): number {
  const options = clockOf(job, server);
  return Math.max(0, Math.min(100, Math.floor(((now - job.createdAt) * 100) / (options.latencyMs ?? 200))));
}

/** Whether a result link of a job that ended still answers. */
export function linkAlive(job: TimelineJob, server: TimelineOptions, now = Date.now()): boolean {
  const options = clockOf(job, server);
  return now < job.createdAt + (options.latencyMs ?? 200) + (options.resultLifetimeMs ?? 86_400_000);
}

/** A loopback HTTP server handing each request, its body read, to one handler. */
export class LoopbackListener {
  private server!: Server;
  private readonly timers = new Set<NodeJS.Timeout>();
  url = '';

  constructor(
    private readonly handle: (request: IncomingMessage, response: ServerResponse, url: URL, body: Buffer) => unknown,
  ) {}

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        Promise.resolve(
          this.handle(request, response, new URL(request.url ?? '/', this.url), Buffer.concat(chunks)),
        ).catch((error) => {
          response.statusCode = 500;
          response.end(String(error));
        });
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Runs `task` after `ms` unless the listener closes first (a callback the upstream sends later). */
  later(ms: number, task: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      task();
    }, ms);
    this.timers.add(timer);
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/**
 * A loopback server class: the listener, its URL, start and close; a subclass keeps only its
 * protocol (`handle`, and whatever else it records).
 */
export abstract class LoopbackServer {
  protected readonly listener = new LoopbackListener((request, response, url, body) =>
    this.handle(request, response, url, body),
  );

  get url(): string {
    return this.listener.url;
  }

  async start(): Promise<this> {
    await this.listener.start();
    return this;
  }

  close(): Promise<void> {
    return this.listener.close();
  }

  protected abstract handle(request: IncomingMessage, response: ServerResponse, url: URL, body: Buffer): unknown;
}

/**
 * A task API whose cancel stops a queued task only (Ark, DashScope): the submits as received, the
 * tasks by id and what tests count, kept the same way by each vendor's server.
 */
export abstract class QueuedCancelServer<R, T> extends LoopbackServer {
  readonly submits: R[] = [];
  readonly tasks = new Map<string, T>();
  /** Task ids a cancel reached while they were queued (honoured). */
  readonly cancels: string[] = [];
  /** Task ids a cancel reached while they ran (refused: they run on). */
  readonly refusedCancels: string[] = [];
  /** Status answers given for a known task. */
  polls = 0;
  downloads = 0;
}

export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

/** A generated clip of this many seconds (a short MP4 the service can measure), at the frame `asked` (a request's body) names. */
export function sendClip(response: ServerResponse, seconds: number, asked: unknown): void {
  const bytes = clipAskedBy(asked, Number.isFinite(seconds) && seconds > 0 ? seconds : 5);
  response.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(bytes.length) });
  response.end(bytes);
}

/** A special answer a test asks a server for instead of its normal one: a status with a body (and Retry-After), or a reset. */
export type Special = { status: number; body: unknown; retryAfter?: string } | 'reset' | undefined;

/** Sends a special answer; false when there is none. */
export function sendSpecial(request: IncomingMessage, response: ServerResponse, special: Special): boolean {
  if (special === undefined) return false;
  if (special === 'reset') {
    request.socket.destroy();
    return true;
  }
  sendJson(response, special.status, special.body, special.retryAfter ? { 'retry-after': special.retryAfter } : {});
  return true;
}

/** What a test may have a server answer a submit with instead of its normal answer: a status (a body where it gives one, Retry-After), or a reset. */
export type SubmitSpecial = { status: number; body?: unknown; retryAfter?: string } | 'reset' | undefined;

/**
 * Answers a submit with the test's special answer, if any: a reset destroys the connection (the
 * body read, no answer); a status goes through the server's own `send` (so it keeps that vendor's
 * headers), with `refusal` as body where the test gave none. False when there is none.
 */
export function answerSubmitSpecial(
  request: IncomingMessage,
  special: SubmitSpecial,
  refusal: (status: number) => unknown,
  send: (status: number, body: unknown, headers: Record<string, string>) => void,
): boolean {
  if (special === undefined) return false;
  if (special === 'reset') {
    request.socket.destroy();
    return true;
  }
  send(
    special.status,
    special.body ?? refusal(special.status),
    special.retryAfter ? { 'retry-after': special.retryAfter } : {},
  );
  return true;
}
