import { providerMapping } from '../../generated/provider-mappings.js';
import { MappedUpstream } from './mapped-upstream.js';
import type { Deployment, DeploymentJob, DeploymentStatus, ProbeResult } from '../deployments/deployment.js';
import { valueAt } from './map-input.js';
import { mappedJob } from './mapped-job.js';
import { firstPollMs, nextPollMs } from './poll-schedule.js';
import { usableJobId } from './job-id.js';
import { UpstreamError, retryAfterMs } from '../deployments/upstream-error.js';
import { answerError } from './upstream-http.js';
import { extensionOf, mimeOfLink, type UpstreamOptions } from './upstream-options.js';

const PROTOCOL = 'fal-queue';
/** The request id a probe asks about: no request has it. */
const PROBE_REQUEST_ID = '00000000-0000-0000-0000-000000000000';

/** fal-js's namespaces: an endpoint id under one of them has one segment more before the app's own path. */
const NAMESPACES = ['workflows', 'comfy'];
/** fal refuses a start timeout of a second or less (fal-js headers.ts). */
const MIN_START_TIMEOUT_SECONDS = 2;

/** A queue status as fal-js types it (types/common.ts): IN_QUEUE with queue_position, IN_PROGRESS and COMPLETED with logs. */
interface QueueStatus {
  status?: 'IN_QUEUE' | 'IN_PROGRESS' | 'COMPLETED';
  request_id?: string;
  status_url?: string;
  response_url?: string;
  cancel_url?: string;
  queue_position?: number;
  /** Set on a COMPLETED request that failed (fal's request errors: detail and error_type). */
  error?: string | null;
  error_type?: string | null;
}

/** What is stored on the task: the request id and where its status, result and cancel are. */
interface FalHandle {
  id: string;
  status: string;
  response: string;
  cancel: string;
}

/**
 * fal's error bodies: a model's validation errors as `detail: [{ loc, msg, type }]` (422, content
 * policy included: type content_policy_violation), a request error as `detail: "..."` with
 * `error_type`. The first problem, with the input field it names.
 */
function falReason(json: unknown): string | undefined {
  const body = json as { detail?: unknown; message?: unknown } | undefined;
  if (typeof body?.detail === 'string') return body.detail;
  if (Array.isArray(body?.detail)) {
    const first = body.detail[0] as { loc?: unknown[]; msg?: unknown } | undefined;
    if (typeof first?.msg !== 'string') return undefined;
    const field = Array.isArray(first.loc) ? first.loc.filter((part) => part !== 'body').join('.') : '';
    return field ? `${field}: ${first.msg}` : first.msg;
  }
  return typeof body?.message === 'string' ? body.message : undefined;
}

/**
 * fal's queue as fal-js publishes it (libs/client/src/queue.ts): POST {baseUrl}/{app} with
 * `Authorization: Key ...` answers a request id with its status_url, response_url and cancel_url;
 * the status is IN_QUEUE (with queue_position), IN_PROGRESS, then COMPLETED (202 before, 200 then);
 * the result is read from response_url (a model's refusal answers there: 422 with fal's
 * validation detail), the media link at the mapping's `result` path (video.url), downloaded at
 * once into the service's store. Cancel is PUT cancel_url. `fal_webhook` (callbacks: true) only
 * wakes the poll. fal's queue has no idempotency key: a submit whose outcome is unknown is never
 * sent again. `x-fal-request-timeout` carries the time left to the deadline, so fal never starts
 * a request the service has given up.
 */
export class FalQueueDeployment extends MappedUpstream implements Deployment {
  readonly kind = PROTOCOL;
  readonly idempotentSubmit = false;

  constructor(options: UpstreamOptions) {
    super(options, PROTOCOL, options.apiKey ? { Authorization: `Key ${options.apiKey}` } : {});
  }

  /** Where a request's status, result and cancel are when fal's answer does not say it on its own origin: as fal-js builds them, from the app's owner and alias (never its sub-path). */
  private requestUrls(app: string, id: string): Omit<FalHandle, 'id'> {
    const parts = app.split('/');
    const base = parts
      .slice(0, NAMESPACES.includes(parts[0]) ? 3 : 2)
      .map(encodeURIComponent)
      .join('/');
    const request = this.http.url(`/${base}/requests/${encodeURIComponent(id)}`).href;
    return { status: `${request}/status`, response: request, cancel: `${request}/cancel` };
  }

  /**
   * The probe: the status of a request id that was never made, under the app routed here (fal-js
   * `queue.status`), which creates nothing and needs the key. fal answers an unknown request and an
   * unknown app alike (404), so the probe learns reachability and the key, not the app's path.
   */
  probe(upstreamModel?: string): Promise<ProbeResult> {
    const app = upstreamModel ?? 'fal-ai/probe';
    return this.probeGet(new URL(this.requestUrls(app, PROBE_REQUEST_ID).status), [200, 202, 404]);
  }

  async start(job: DeploymentJob): Promise<string> {
    const body = mappedJob(PROTOCOL, job);
    const app = job.upstreamModel ?? job.model.id;
    const target = this.http.url(`/${app.split('/').map(encodeURIComponent).join('/')}`);
    if (job.upstreamCallbackUrl) target.searchParams.set('fal_webhook', job.upstreamCallbackUrl);
    const secondsLeft =
      job.deadlineAt !== undefined ? Math.ceil((job.deadlineAt - this.options.now()) / 1000) : undefined;
    const answer = await this.http.json(target, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        ...(secondsLeft !== undefined
          ? { 'X-Fal-Request-Timeout': String(Math.max(MIN_START_TIMEOUT_SECONDS, secondsLeft)) }
          : {}),
      },
      body: Buffer.from(JSON.stringify(body)),
      timeoutMs: this.submitTimeoutMs,
      fresh: true,
    });
    if (answer.status < 200 || answer.status >= 300)
      throw answerError(
        `POST ${app}`,
        answer.status,
        answer.headers,
        falReason(answer.json),
        this.options.now(),
        target,
      );
    const queued = answer.json as QueueStatus | undefined;
    if (typeof queued?.request_id !== 'string' || queued.request_id.length === 0)
      throw new UpstreamError('ambiguous', `POST ${app}: an answer without request_id`);
    if (!usableJobId(queued.request_id))
      throw new UpstreamError(
        'protocol',
        `POST ${app}: the request_id ${JSON.stringify(queued.request_id)} cannot name a job`,
      );
    const built = this.requestUrls(app, queued.request_id);
    // The links fal answered, when they are on its own origin (they are sent the key); else built as fal-js builds them.
    const own = (link: string | undefined, fallback: string) =>
      typeof link === 'string' && this.http.ownOrigin(link) ? link : fallback;
    const handle: FalHandle = {
      id: queued.request_id,
      status: own(queued.status_url, built.status),
      response: own(queued.response_url, built.response),
      cancel: own(queued.cancel_url, built.cancel),
    };
    return JSON.stringify(handle);
  }

  firstPollAfterMs(): number {
    return firstPollMs(undefined, this.options.pollFallbackMs);
  }

  private parse(handle: string): FalHandle {
    try {
      const parsed = JSON.parse(handle) as FalHandle;
      if ([parsed.id, parsed.status, parsed.response, parsed.cancel].every((v) => typeof v === 'string')) return parsed;
    } catch {
      // Reported below.
    }
    throw new UpstreamError('protocol', 'fal-queue: the stored handle is not a fal request');
  }

  /** fal's text without the request's own id (the service adds nothing that names the upstream's job). */
  private failed(reason: string, request: FalHandle): DeploymentStatus {
    return {
      state: 'failed',
      reason: reason.split(request.id).join('').trim() || 'The provider reported the request failed.',
    };
  }

  async poll(handle: string, job: DeploymentJob): Promise<DeploymentStatus> {
    const request = this.parse(handle);
    const statusUrl = new URL(request.status);
    statusUrl.searchParams.set('logs', '0');
    const answer = await this.http.json(statusUrl, {
      method: 'GET',
      timeoutMs: this.options.requestTimeoutMs,
      signal: job.requestSignal,
    });
    if (answer.status === 404)
      throw new UpstreamError('lost', 'GET status: fal does not know the request (404)', { status: 404 });
    if (answer.status < 200 || answer.status >= 300)
      throw answerError('GET status', answer.status, answer.headers, falReason(answer.json), this.options.now());
    const status = answer.json as QueueStatus | undefined;
    if (status?.status === 'IN_QUEUE' || status?.status === 'IN_PROGRESS') {
      // fal reports a place in the queue and logs, no share done: polls keep the fallback pace (or fal's Retry-After).
      const hint = retryAfterMs(answer.headers['retry-after'] as string | undefined, this.options.now());
      return {
        state: 'running',
        progress: 0,
        retryAfterMs: nextPollMs({ progress: 0, elapsedMs: 0 }, hint, this.options.pollFallbackMs),
      };
    }
    if (status?.status !== 'COMPLETED')
      throw new UpstreamError('protocol', `GET status: unknown status ${JSON.stringify(status?.status)}`);
    if (typeof status.error === 'string' && status.error.length > 0) return this.failed(status.error, request);
    return this.result(request, job);
  }

  /** A COMPLETED request's result: the media link, or the reason fal gives for the failure. */
  private async result(request: FalHandle, job: DeploymentJob): Promise<DeploymentStatus> {
    const answer = await this.http.json(new URL(request.response), {
      method: 'GET',
      timeoutMs: this.options.requestTimeoutMs,
      signal: job.requestSignal,
    });
    if (answer.status === 404)
      throw new UpstreamError('lost', 'GET result: fal does not know the request (404)', { status: 404 });
    const reason = falReason(answer.json);
    // A model's refusal (4xx: invalid input, content policy), or a request fal gave up on after its own retries (an error_type): final.
    const errorType =
      (answer.json as { error_type?: unknown } | undefined)?.error_type ?? answer.headers['x-fal-error-type'];
    if ((answer.status >= 400 && answer.status < 500 && answer.status !== 429) || (answer.status >= 500 && errorType)) {
      return this.failed(reason ?? `The provider refused the request (${answer.status}).`, request);
    }
    if (answer.status < 200 || answer.status >= 300)
      throw answerError('GET result', answer.status, answer.headers, reason, this.options.now());
    const mapping = providerMapping(PROTOCOL, job.model.id);
    const path = mapping?.result ?? 'video.url';
    const link = valueAt(answer.json, path);
    if (typeof link !== 'string' || link.length === 0)
      throw new UpstreamError('protocol', `GET result: no media link at ${path}`);
    // fal's File object names its type beside the link (video.content_type).
    const declared = valueAt(answer.json, path.replace(/url$/, 'content_type'));
    const mime = typeof declared === 'string' && declared.includes('/') ? declared : mimeOfLink(link);
    return {
      state: 'succeeded',
      outputs: [{ bytes: this.resultBytes(link, job), mime, extension: extensionOf(mime) }],
      ...(job.sourceClipSeconds !== undefined ? { sourceClipSeconds: job.sourceClipSeconds } : {}),
    };
  }

  /** PUT cancel_url: a queued request is dropped, a running one signalled; one already done (400 ALREADY_COMPLETED) or unknown (404) has nothing to stop. */
  async cancel(handle: string): Promise<void> {
    const request = this.parse(handle);
    const answer = await this.http.json(new URL(request.cancel), {
      method: 'PUT',
      timeoutMs: this.options.requestTimeoutMs,
    });
    if (answer.status === 400 || answer.status === 404) return;
    if (answer.status < 200 || answer.status >= 300)
      throw answerError('PUT cancel', answer.status, answer.headers, falReason(answer.json), this.options.now());
  }
}
