import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { clipAskedBy } from '../../media/fixtures.js';
import { LoopbackListener, type Phase, phaseOf, sendJson } from '../loopback-upstream.js';

/**
 * A vendor server as a class (Runway, Luma, Kling): over ../loopback-upstream.ts (the listener, the
 * timeline of a job), what is recorded of every submit, the job store, expiring media links under
 * /media/ and the hostile answers a test asks a submit for. Each vendor's paths, bodies, states and
 * error envelopes are in its own file, written from that vendor's published API.
 */
export interface GenerationClock {
  /** From submit to the end (default 300 ms). */
  latencyMs?: number;
  /** Of that, how long the job waits in the vendor's queue before it runs (default a fifth). */
  queuedMs?: number;
  /** How long a media link answers after the job ended. */
  outputLifetimeMs?: number;
  /** One job's own clock over these (see TimelineOptions.clockFor in ../loopback-upstream.ts). */
  clockFor?: (job: VendorJob) => GenerationClock | undefined;
}

/** What a submit answers instead of creating a job: a status with a body (and Retry-After), or a reset connection; `reset-after-create` creates the job, then drops the connection before answering (an ambiguous submit). */
export type SubmitOverride =
  | { status: number; body?: unknown; retryAfter?: string }
  | 'reset'
  | 'reset-after-create'
  | undefined;

export interface VendorJob {
  id: string;
  createdAt: number;
  /** The request body as received. */
  body: Record<string, unknown>;
  /** The submit path it came by. */
  path: string;
  /** When a cancel (asked, or the vendor's own) reached it while it still ran. */
  canceledAt?: number;
  /** Deleted: the vendor forgets it. */
  deleted?: boolean;
}

export interface Received {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

export abstract class VendorServer {
  readonly submits: Received[] = [];
  /** When each submit arrived (ms since the epoch), in order. */
  readonly submitTimes: number[] = [];
  readonly jobs = new Map<string, VendorJob>();
  /** Every status request that reached a known job. */
  polls = 0;
  /** Task list requests (a probe asks one). */
  lists = 0;
  /** Job ids a cancel reached while they still ran. */
  readonly cancels: string[] = [];
  downloads = 0;
  private readonly listener = new LoopbackListener((request, response, url, body) =>
    this.receive(request, response, url, body),
  );

  constructor(protected readonly clock: GenerationClock & { clipSeconds?: number }) {}

  /** The clock as it holds for this job. */
  protected clockOf(job: VendorJob): GenerationClock {
    const own = this.clock.clockFor?.(job);
    return own ? { ...this.clock, ...own } : this.clock;
  }

  get url(): string {
    return this.listener.url;
  }

  async start(): Promise<this> {
    await this.listener.start();
    return this;
  }

  async close(): Promise<void> {
    await this.listener.close();
  }

  /** The upstream's baseUrl as an operator writes it in a deployments file. */
  abstract get baseUrl(): string;

  protected abstract route(request: IncomingMessage, url: URL, body: Buffer, response: ServerResponse): Promise<void>;

  private async receive(request: IncomingMessage, response: ServerResponse, url: URL, body: Buffer): Promise<void> {
    const media = /^\/media\/([^/]+)\.mp4$/.exec(url.pathname);
    if (media && request.method === 'GET') return this.download(response, media[1], url);
    await this.route(request, url, body, response);
  }

  protected json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    sendJson(response, status, body, headers);
  }

  /** The body as JSON, or undefined when it is not a JSON object. */
  protected parse(raw: Buffer): Record<string, unknown> | undefined {
    try {
      const value = JSON.parse(raw.toString('utf8') || '{}');
      return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
    } catch {
      return undefined;
    }
  }

  /** Records a submit as it reached the server (refused or not: what arrived is what a test counts). */
  protected record(request: IncomingMessage, url: URL, body: Record<string, unknown>): void {
    this.submits.push({ method: request.method ?? '', path: url.pathname, headers: request.headers, body });
    this.submitTimes.push(Date.now());
  }

  /** Creates a job (the vendor's id given) from a submit. */
  protected create(id: string, path: string, body: Record<string, unknown>): VendorJob {
    const job: VendorJob = { id, createdAt: Date.now(), body, path };
    this.jobs.set(id, job);
    return job;
  }

  protected newId(): string {
    return randomUUID();
  }

  /** Where a job is on its clock now. */
  protected phase(job: VendorJob): Phase {
    const clock = this.clockOf(job);
    const latency = clock.latencyMs ?? 300;
    // A cancel is recorded only while the job runs (canceledAt before its end), as the vendors stop it.
    return phaseOf(job, { latencyMs: latency, queuedMs: clock.queuedMs ?? latency / 5 });
  }

  /** How far a running job is, 0..1. */
  protected progress(job: VendorJob): number {
    const latency = this.clockOf(job).latencyMs ?? 300;
    return Math.max(0, Math.min(1, (Date.now() - job.createdAt) / latency));
  }

  /** A job's media link, signed with the time it stops answering (vendors' CDN links expire). */
  protected mediaUrl(job: VendorJob): string {
    const clock = this.clockOf(job);
    const endsAt = job.createdAt + (clock.latencyMs ?? 300);
    const expires = endsAt + (clock.outputLifetimeMs ?? 24 * 3_600_000);
    return `${this.url}/media/${job.id}.mp4?expires=${expires}`;
  }

  private download(response: ServerResponse, id: string, url: URL): void {
    const job = this.jobs.get(id);
    const expires = Number(url.searchParams.get('expires'));
    if (!job || !Number.isFinite(expires) || Date.now() >= expires) {
      // CDNs answer an expired signed link with 403 (CloudFront, OSS, S3 alike).
      response.writeHead(403, { 'content-type': 'application/xml' }).end('<Error><Code>AccessDenied</Code></Error>');
      return;
    }
    this.downloads++;
    const bytes = clipAskedBy(job.body, this.clock.clipSeconds ?? 5);
    response.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(bytes.length) });
    response.end(bytes);
  }

  /** Applies a submit override; true when it answered (the caller stops). `create` runs for reset-after-create. */
  protected override(
    override: SubmitOverride,
    request: IncomingMessage,
    response: ServerResponse,
    create: () => void,
  ): boolean {
    if (override === undefined) return false;
    if (override === 'reset') {
      request.socket.destroy();
      return true;
    }
    if (override === 'reset-after-create') {
      create();
      request.socket.destroy();
      return true;
    }
    this.json(
      response,
      override.status,
      override.body ?? {},
      override.retryAfter ? { 'retry-after': override.retryAfter } : {},
    );
    return true;
  }
}
