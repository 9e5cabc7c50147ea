import { Webhook } from 'standardwebhooks';
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

const PROTOCOL = 'replicate';
/** A model as replicate-javascript parses it (lib/identifier.js): owner/name, or owner/name:version. */
export const REPLICATE_MODEL = /^(?<owner>[^/]+)\/(?<name>[^/:]+)(:(?<version>.+))?$/;
/** Replicate's shortest Cancel-After. */
const MIN_CANCEL_AFTER_SECONDS = 5;
/** A progress bar in a prediction's logs, as replicate-javascript reads it (lib/util.js parseProgressFromLogs): "42%|████  | 21/50". */
const PROGRESS_LINE = /^\s*(\d+)%\s*\|.+?\|\s*(\d+)\/(\d+)/;

/** A prediction as replicate-javascript types it (index.d.ts), the fields read here. */
interface Prediction {
  id?: string;
  status?: 'starting' | 'processing' | 'succeeded' | 'failed' | 'canceled' | 'aborted';
  output?: unknown;
  error?: unknown;
  logs?: string | null;
  created_at?: string;
  started_at?: string | null;
  urls?: { get?: string; cancel?: string };
}

/** What is stored on the task: the prediction's id and its get and cancel links. */
interface ReplicateHandle {
  id: string;
  get: string;
  cancel: string;
}

/** Replicate's errors are problem details: { title, detail, status, invalid_fields? }; the first invalid field when there is one. */
function replicateReason(json: unknown): string | undefined {
  const problem = json as
    | { title?: unknown; detail?: unknown; invalid_fields?: { field?: unknown; description?: unknown }[] }
    | undefined;
  const field = Array.isArray(problem?.invalid_fields) ? problem.invalid_fields[0] : undefined;
  if (typeof field?.description === 'string')
    return typeof field.field === 'string' ? `${field.field}: ${field.description}` : field.description;
  if (typeof problem?.detail === 'string') return problem.detail.replace(/^\s*-\s*/, '').trim();
  return typeof problem?.title === 'string' ? problem.title : undefined;
}

/** The share done, from the last progress bar in the logs (0 to 100), if any. */
function progressOf(logs: string | null | undefined): number | undefined {
  if (typeof logs !== 'string') return undefined;
  for (const line of logs.split('\n').reverse()) {
    const match = PROGRESS_LINE.exec(line);
    if (match) return Math.min(100, Number(match[1]));
  }
  return undefined;
}

/** Every link in a prediction's output: one link, or a list of them. */
function outputLinks(output: unknown): string[] {
  const values = Array.isArray(output) ? output : [output];
  return values.filter((v): v is string => typeof v === 'string' && /^https?:\/\//.test(v));
}

/**
 * Replicate's predictions API as replicate-javascript publishes it (lib/predictions.js, index.js):
 * POST {baseUrl}/models/{owner}/{name}/predictions (or POST {baseUrl}/predictions with the version
 * of owner/name:version) with `Authorization: Bearer ...` and `Cancel-After` set to the time left
 * to the task's deadline, so Replicate itself stops a prediction the service has given up; GET
 * urls.get (starting, processing with a progress bar in its logs, then succeeded, failed,
 * canceled or aborted); POST urls.cancel. The output links (replicate.delivery, gone after an
 * hour) are downloaded at once into the service's store and never handed out. A `webhook` with
 * `webhook_events_filter: [completed]` (callbacks: true) only wakes the poll, and only once its
 * Standard Webhooks signature holds (the secret from GET /webhooks/default/secret). Replicate
 * documents no idempotency key: a submit whose outcome is unknown is never sent again.
 * `Prefer: wait` is not sent: a submit that holds its connection open for a minute would tie up a
 * worker slot, and a cut in that minute would leave the outcome unknown.
 */
export class ReplicateDeployment extends MappedUpstream implements Deployment {
  readonly kind = PROTOCOL;
  readonly idempotentSubmit = false;
  /** Replicate's webhook signing secret, fetched when the first callback is checked. */
  private secret?: Promise<string>;

  constructor(options: UpstreamOptions) {
    super(options, PROTOCOL, options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {});
  }

  /** The probe: the key's account (replicate-javascript `accounts.current()`, GET /account), which creates nothing; a baseUrl without `/v1` answers 404. */
  probe(): Promise<ProbeResult> {
    return this.probeGet(this.http.url('/account'), [200]);
  }

  async start(job: DeploymentJob): Promise<string> {
    const body = mappedJob(PROTOCOL, job);
    const model = job.upstreamModel ?? job.model.id;
    const parsed = REPLICATE_MODEL.exec(model)?.groups;
    if (!parsed)
      throw new UpstreamError('rejected', `replicate: ${model} is not owner/name or owner/name:version`, {
        reason: 'The provider does not know the model.',
      });
    const target = parsed.version
      ? this.http.url('/predictions')
      : this.http.url(`/models/${encodeURIComponent(parsed.owner)}/${encodeURIComponent(parsed.name)}/predictions`);
    const request = {
      ...(parsed.version ? { version: parsed.version } : {}),
      input: body,
      ...(job.upstreamCallbackUrl ? { webhook: job.upstreamCallbackUrl, webhook_events_filter: ['completed'] } : {}),
    };
    const secondsLeft =
      job.deadlineAt !== undefined ? Math.ceil((job.deadlineAt - this.options.now()) / 1000) : undefined;
    const answer = await this.http.json(target, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        ...(secondsLeft !== undefined ? { 'Cancel-After': `${Math.max(MIN_CANCEL_AFTER_SECONDS, secondsLeft)}s` } : {}),
      },
      body: Buffer.from(JSON.stringify(request)),
      timeoutMs: this.submitTimeoutMs,
      fresh: true,
    });
    if (answer.status < 200 || answer.status >= 300)
      throw answerError(
        'POST predictions',
        answer.status,
        answer.headers,
        replicateReason(answer.json),
        this.options.now(),
        target,
      );
    const prediction = answer.json as Prediction | undefined;
    if (typeof prediction?.id !== 'string' || prediction.id.length === 0)
      throw new UpstreamError('ambiguous', 'POST predictions: an answer without an id');
    if (!usableJobId(prediction.id))
      throw new UpstreamError(
        'protocol',
        `POST predictions: the id ${JSON.stringify(prediction.id)} cannot name a job`,
      );
    // The links Replicate answered, when they are on its own origin (they are sent the key); else its documented paths.
    const own = (link: string | undefined, path: string) =>
      typeof link === 'string' && this.http.ownOrigin(link) ? link : this.http.url(path).href;
    const id = encodeURIComponent(prediction.id);
    const handle: ReplicateHandle = {
      id: prediction.id,
      get: own(prediction.urls?.get, `/predictions/${id}`),
      cancel: own(prediction.urls?.cancel, `/predictions/${id}/cancel`),
    };
    return JSON.stringify(handle);
  }

  firstPollAfterMs(): number {
    return firstPollMs(undefined, this.options.pollFallbackMs);
  }

  private parse(handle: string): ReplicateHandle {
    try {
      const parsed = JSON.parse(handle) as ReplicateHandle;
      if ([parsed.id, parsed.get, parsed.cancel].every((v) => typeof v === 'string')) return parsed;
    } catch {
      // Reported below.
    }
    throw new UpstreamError('protocol', 'replicate: the stored handle is not a prediction');
  }

  async poll(handle: string, job: DeploymentJob): Promise<DeploymentStatus> {
    const ref = this.parse(handle);
    const answer = await this.http.json(new URL(ref.get), {
      method: 'GET',
      timeoutMs: this.options.requestTimeoutMs,
      signal: job.requestSignal,
    });
    if (answer.status === 404)
      throw new UpstreamError('lost', 'GET prediction: Replicate does not know the prediction (404)', { status: 404 });
    if (answer.status < 200 || answer.status >= 300)
      throw answerError(
        'GET prediction',
        answer.status,
        answer.headers,
        replicateReason(answer.json),
        this.options.now(),
      );
    const prediction = answer.json as Prediction | undefined;
    const now = this.options.now();
    switch (prediction?.status) {
      case 'starting':
      case 'processing': {
        const progress = prediction.status === 'processing' ? (progressOf(prediction.logs) ?? 0) : 0;
        const since = Date.parse(prediction.started_at ?? '');
        const hint = retryAfterMs(answer.headers['retry-after'] as string | undefined, now);
        const report = { progress, elapsedMs: Number.isNaN(since) ? 0 : Math.max(0, now - since) };
        return {
          state: 'running',
          progress: Math.max(0, Math.min(99, progress)),
          retryAfterMs: nextPollMs(report, hint, this.options.pollFallbackMs),
        };
      }
      case 'succeeded':
        return this.succeeded(prediction, job);
      case 'failed': {
        const error =
          typeof prediction.error === 'string'
            ? prediction.error
            : prediction.error
              ? JSON.stringify(prediction.error)
              : '';
        return {
          state: 'failed',
          reason: error.split(ref.id).join('').trim() || 'The provider reported the prediction failed.',
        };
      }
      case 'canceled':
        // The service cancels only predictions of tasks that ended (and polls those no more): this cancel is Replicate's or its owner's.
        return { state: 'canceled', reason: 'The provider canceled the prediction.' };
      case 'aborted':
        return { state: 'failed', reason: 'The provider did not start the prediction before its deadline.' };
      default:
        throw new UpstreamError('protocol', `GET prediction: unknown status ${JSON.stringify(prediction?.status)}`);
    }
  }

  private async succeeded(prediction: Prediction, job: DeploymentJob): Promise<DeploymentStatus> {
    const path = providerMapping(PROTOCOL, job.model.id)?.result ?? 'output';
    const links = outputLinks(valueAt(prediction, path));
    if (links.length === 0)
      throw new UpstreamError('protocol', `GET prediction: a succeeded prediction without a link at ${path}`);
    return {
      state: 'succeeded',
      outputs: links.map((link) => {
        const mime = mimeOfLink(link);
        return { bytes: this.resultBytes(link, job), mime, extension: extensionOf(mime) };
      }),
      ...(job.sourceClipSeconds !== undefined ? { sourceClipSeconds: job.sourceClipSeconds } : {}),
    };
  }

  /** POST urls.cancel; a prediction Replicate no longer knows (404) has nothing to stop, and one already ended is answered as it is. */
  async cancel(handle: string): Promise<void> {
    const ref = this.parse(handle);
    const answer = await this.http.json(new URL(ref.cancel), {
      method: 'POST',
      timeoutMs: this.options.requestTimeoutMs,
    });
    if (answer.status === 404) return;
    if (answer.status < 200 || answer.status >= 300)
      throw answerError('POST cancel', answer.status, answer.headers, replicateReason(answer.json), this.options.now());
  }

  /** The account's webhook signing secret (GET /webhooks/default/secret), fetched once; a failed fetch is asked again next time. */
  private signingSecret(): Promise<string> {
    this.secret ??= (async () => {
      const answer = await this.http.json(this.http.url('/webhooks/default/secret'), {
        method: 'GET',
        timeoutMs: this.options.requestTimeoutMs,
      });
      const key = (answer.json as { key?: unknown } | undefined)?.key;
      if (answer.status !== 200 || typeof key !== 'string' || key.length === 0)
        throw new UpstreamError('protocol', `GET webhooks/default/secret: status ${answer.status}`);
      return key;
    })().catch((error: unknown) => {
      this.secret = undefined;
      throw error;
    });
    return this.secret;
  }

  /** Replicate signs its webhooks with Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature over the raw body); a stale timestamp fails too. */
  async verifyCallback(request: {
    headers: Record<string, string | string[] | undefined>;
    body: Buffer;
  }): Promise<boolean> {
    const header = (name: string) => {
      const value = request.headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    const [id, timestamp, signature] = [header('webhook-id'), header('webhook-timestamp'), header('webhook-signature')];
    if (!id || !timestamp || !signature) return false;
    try {
      new Webhook(await this.signingSecret()).verify(request.body, {
        'webhook-id': id,
        'webhook-timestamp': timestamp,
        'webhook-signature': signature,
      });
      return true;
    } catch {
      return false;
    }
  }
}
