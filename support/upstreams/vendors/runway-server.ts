import type { IncomingMessage, ServerResponse } from 'node:http';
import { type GenerationClock, type SubmitOverride, type VendorJob, VendorServer } from './vendor-server.js';

/**
 * A loopback server speaking Runway's API as Runway publishes it, written from that API and not
 * from the profile. Sources: github:runwayml/sdk-node (release 4.12.0) src/client.ts (Bearer key,
 * `X-Runway-Version`, default 2024-11-06, base https://api.dev.runwayml.com),
 * src/resources/text-to-video.ts (POST /v1/text_to_video: model, promptText, ratio, duration),
 * src/resources/image-to-video.ts (POST /v1/image_to_video: promptImage, a link or
 * [{uri, position: first|last}]), both answering { id }; src/resources/tasks.ts (GET /v1/tasks/{id}:
 * PENDING, THROTTLED, RUNNING with `progress` 0..1, SUCCEEDED with `output` links that "expire
 * within 24-48 hours", FAILED with `failure` and an optional machine-readable `failureCode`,
 * CANCELLED; DELETE /v1/tasks/{id} cancels a pending, throttled or running task, 204, and "aborted
 * and deleted tasks will not be able to be fetched again": 404 after), src/core/error.ts (errors
 * by HTTP status, the body's text shown as it is), failure codes as
 * https://docs.dev.runwayml.com/errors/task-failures/ lists them (SAFETY.INPUT.TEXT, ...).
 * The error body { error } (and { error, issues } for a refused body) is this server's reading of
 * Runway's API answers; the SDK does not type it. Runway puts no error in a 2xx body: a refusal is
 * a 4xx, overload a 429 or 5xx.
 */
export interface RunwayServerOptions extends GenerationClock {
  /** The key a request must carry as Bearer (default: any). */
  apiKey?: string;
  /** THROTTLED instead of PENDING while queued (the organisation is at its concurrency limit). */
  throttled?: boolean;
  /** A task whose promptText contains this fails moderation (FAILED, failureCode SAFETY.INPUT.TEXT). */
  failWhenPromptContains?: string;
  /** Runway cancels every task itself once it runs (an operator cancelled it in the dashboard). */
  cancelledByRunway?: boolean;
  /** The answer to the n-th submit instead of creating a task. */
  submit?: (index: number, body: Record<string, unknown>) => SubmitOverride;
  /** How long an output link answers after the task succeeded (default 24 h). */
  outputLifetimeMs?: number;
}

const VERSIONS = ['2024-11-06'];
const RATIOS = ['1280:720', '720:1280', '1104:832', '832:1104', '960:960', '1584:672', '1920:1080', '1080:1920'];

export class RunwayServer extends VendorServer {
  constructor(private readonly options: RunwayServerOptions = {}) {
    super(options);
  }

  get baseUrl(): string {
    return this.url;
  }

  private error(response: ServerResponse, status: number, error: string, extra: Record<string, unknown> = {}): void {
    this.json(response, status, { error, ...extra });
  }

  protected async route(request: IncomingMessage, url: URL, raw: Buffer, response: ServerResponse): Promise<void> {
    const submit = /^\/v1\/(text_to_video|image_to_video)$/.exec(url.pathname);
    const body = this.parse(raw);
    if (request.method === 'POST' && submit) this.record(request, url, body ?? {});
    const key = this.options.apiKey;
    if (key !== undefined && request.headers.authorization !== `Bearer ${key}`)
      return this.error(
        response,
        401,
        'Incorrect API key provided. You can find your API key in the developer portal.',
      );
    const version = request.headers['x-runway-version'];
    if (typeof version !== 'string' || !VERSIONS.includes(version))
      return this.error(
        response,
        400,
        version === undefined
          ? 'You must set the X-Runway-Version header to a valid API version.'
          : `API version ${String(version)} is not a valid version.`,
      );
    if (request.method === 'POST' && submit) return this.submitTask(request, url, submit[1], body, response);
    const task = /^\/v1\/tasks\/([^/]+)$/.exec(url.pathname);
    const job = task ? this.jobs.get(task[1]) : undefined;
    if (!task || !job || job.deleted) return this.error(response, 404, 'Not found');
    if (request.method === 'GET') {
      this.polls++;
      return this.json(response, 200, this.task(job));
    }
    if (request.method === 'DELETE') {
      const phase = this.phase(job);
      if (phase === 'queued' || phase === 'running') {
        job.canceledAt = Date.now();
        this.cancels.push(job.id);
      }
      job.deleted = true;
      response.writeHead(204).end();
      return;
    }
    this.error(response, 405, 'Method not allowed');
  }

  private submitTask(
    request: IncomingMessage,
    url: URL,
    kind: string,
    body: Record<string, unknown> | undefined,
    response: ServerResponse,
  ) {
    const index = this.submits.length - 1;
    if (!body) return this.error(response, 400, 'Invalid JSON body');
    const create = () => this.create(this.newId(), url.pathname, body);
    if (this.override(this.options.submit?.(index, body), request, response, create)) return;
    const issues: { path: string[]; message: string }[] = [];
    if (typeof body.model !== 'string') issues.push({ path: ['model'], message: 'Required' });
    if (!RATIOS.includes(String(body.ratio)))
      issues.push({
        path: ['ratio'],
        message: `Invalid enum value. Expected ${RATIOS.map((r) => `'${r}'`).join(' | ')}`,
      });
    if (
      body.duration !== undefined &&
      (!Number.isInteger(body.duration) || Number(body.duration) < 2 || Number(body.duration) > 10)
    )
      issues.push({ path: ['duration'], message: 'Must be an integer from 2 to 10' });
    if (kind === 'text_to_video' && (typeof body.promptText !== 'string' || body.promptText === ''))
      issues.push({ path: ['promptText'], message: 'Required' });
    if (kind === 'image_to_video' && !this.promptImage(body.promptImage))
      issues.push({ path: ['promptImage'], message: 'A HTTPS URL, or a list of { uri, position }' });
    // gen4_turbo and gen4.5 take a first frame only ("position: 'first'" in the SDK's types); veo3.1 and others first | last.
    const frames = Array.isArray(body.promptImage) ? (body.promptImage as { position?: string }[]) : [];
    if (String(body.model).startsWith('gen4') && frames.some((f) => f?.position === 'last'))
      issues.push({ path: ['promptImage', 'position'], message: "Invalid literal value, expected 'first'" });
    if (issues.length > 0) return this.error(response, 400, 'Validation of body failed', { issues });
    const job = create();
    this.json(response, 200, { id: job.id });
  }

  private promptImage(value: unknown): boolean {
    if (typeof value === 'string') return value.length > 0;
    return (
      Array.isArray(value) &&
      value.length > 0 &&
      value.every((i) => typeof i?.uri === 'string' && ['first', 'last'].includes(i?.position))
    );
  }

  private task(job: VendorJob) {
    const base = { id: job.id, createdAt: new Date(job.createdAt).toISOString() };
    const phase = this.phase(job);
    if (phase === 'canceled') return { ...base, status: 'CANCELLED' };
    if (phase === 'queued') return { ...base, status: this.options.throttled ? 'THROTTLED' : 'PENDING' };
    if (phase === 'running' && this.options.cancelledByRunway) return { ...base, status: 'CANCELLED' };
    if (phase === 'running')
      return { ...base, status: 'RUNNING', progress: Math.round(this.progress(job) * 100) / 100 };
    const trigger = this.options.failWhenPromptContains;
    if (trigger !== undefined && String(job.body.promptText ?? '').includes(trigger))
      return {
        ...base,
        status: 'FAILED',
        failure: `Your text prompt for task ${job.id} did not pass our content moderation. Please edit it and try again.`,
        failureCode: 'SAFETY.INPUT.TEXT',
      };
    return { ...base, status: 'SUCCEEDED', output: [this.mediaUrl(job)] };
  }
}
