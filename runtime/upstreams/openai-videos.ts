import { providerMapping } from '../../generated/provider-mappings.js';
import { MappedUpstream } from './mapped-upstream.js';
import type { Deployment, DeploymentJob, DeploymentStatus, ProbeResult } from '../deployments/deployment.js';
import { JobsDeployment } from './jobs.js';
import { mapInput } from './map-input.js';
import { firstPollMs, nextPollMs } from './poll-schedule.js';
import { usableJobId } from './job-id.js';
import { UpstreamError, retryAfterMs } from '../deployments/upstream-error.js';
import { answerError } from './upstream-http.js';
import type { UpstreamOptions } from './upstream-options.js';

const PROTOCOL = 'openai-videos';

/** The Video object of OpenAI's Videos API (openai-node resources/videos.ts), the fields read here. */
interface Video {
  id?: string;
  status?: 'queued' | 'in_progress' | 'completed' | 'failed';
  progress?: number;
  created_at?: number;
  model?: string;
  prompt?: string | null;
  error?: { code?: string; message?: string } | null;
}

/** How far apart the provider's clock and this one may be when a video's created_at is matched (a minute). */
const CLOCK_SLACK_MS = 60_000;
/** The most pages of the list read when looking for a video (100 videos each, newest first). */
const FIND_PAGES = 10;

/** OpenAI's error shape: { error: { message, type, param, code } }. */
function errorReason(json: unknown): string | undefined {
  const error = (json as { error?: { message?: unknown } } | undefined)?.error;
  return typeof error?.message === 'string' ? error.message : undefined;
}

/** Appends a value the way openai-node's multipart encoder does: arrays as `key[]`, objects as `key[name]`, scalars as text. */
function addFormValue(form: FormData, key: string, value: unknown): void {
  if (value === undefined || value === null) return;
  if (Array.isArray(value)) for (const entry of value) addFormValue(form, `${key}[]`, entry);
  else if (typeof value === 'object')
    for (const [name, entry] of Object.entries(value)) addFormValue(form, `${key}[${name}]`, entry);
  else form.append(key, String(value));
}

/**
 * OpenAI's Videos API as published in openai-node (resources/videos.ts) and spoken by
 * OpenAI-compatible relays (new-api, LiteLLM) and mediaforge's own /v1: POST {baseUrl}/videos as
 * multipart/form-data (`model`, `prompt`, `seconds`, `size`, the model's other fields in bracket
 * notation), GET /videos/{id} (queued, in_progress, completed, failed), GET /videos/{id}/content
 * for the bytes (streamed into the store; a redirect on the upstream's own origin is followed),
 * then DELETE /videos/{id} once they are stored. The API documents no idempotency key, so a
 * submit whose outcome is unknown is never sent again (an Idempotency-Key is still sent: relays
 * that honour it, mediaforge's /v1 among them, then cannot start a second video from a retry).
 */
export class OpenAiVideosDeployment extends MappedUpstream implements Deployment {
  readonly kind = PROTOCOL;
  readonly idempotentSubmit = false;
  /** When this process submitted each video: the Video's created_at is whole seconds, too coarse to pace polls by. */
  private readonly submittedAt = new Map<string, number>();

  constructor(options: UpstreamOptions) {
    // The Videos API has no completion callback: polls only.
    super(
      options,
      PROTOCOL,
      { ...(options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {}), 'Accept-Language': 'en' },
      false,
    );
  }

  /** The probe: the list of videos (openai-node `videos.list()`, GET /videos), which creates nothing and needs the key; a baseUrl without the Videos API answers 404. */
  probe(): Promise<ProbeResult> {
    return this.probeGet(this.http.url('/videos?limit=1'), [200]);
  }

  async start(job: DeploymentJob): Promise<string> {
    const mapping = providerMapping(PROTOCOL, job.model.id);
    const mapped = mapping && mapInput(mapping, job.portableInput ?? job.input);
    if (!mapped?.ok)
      throw new UpstreamError('rejected', `${PROTOCOL}: the input cannot be sent`, {
        reason: mapped ? `The provider does not take ${mapped.field} ${JSON.stringify(mapped.value)}.` : undefined,
      });
    const form = new FormData();
    form.append('model', job.upstreamModel ?? job.model.id);
    for (const [key, value] of Object.entries(mapped.body)) addFormValue(form, key, value);
    const encoded = new Response(form);
    const target = this.http.url('/videos');
    const answer = await this.http.json(target, {
      method: 'POST',
      headers: {
        'Content-Type': encoded.headers.get('content-type')!,
        'Idempotency-Key': JobsDeployment.idempotencyKey(job.taskId),
      },
      body: Buffer.from(await encoded.arrayBuffer()),
      timeoutMs: this.submitTimeoutMs,
      fresh: true,
    });
    if (answer.status < 200 || answer.status >= 300)
      throw answerError(
        'POST /videos',
        answer.status,
        answer.headers,
        errorReason(answer.json),
        this.options.now(),
        target,
      );
    const id = (answer.json as Video | undefined)?.id;
    if (typeof id !== 'string' || id.length === 0)
      throw new UpstreamError('ambiguous', 'POST /videos: an answer without an id');
    if (!usableJobId(id))
      throw new UpstreamError('protocol', `POST /videos: the id ${JSON.stringify(id)} cannot name a job`);
    this.submittedAt.set(id, this.options.now());
    return id;
  }

  firstPollAfterMs(): number {
    return firstPollMs(undefined, this.options.pollFallbackMs);
  }

  /**
   * The video a submit whose answer never came made: the list (GET /videos, newest first) read
   * back to the time the submit could have started, a video of the same model and prompt created
   * between then and a minute after it was given up. `absent` when the list holds none.
   */
  async findJob(job: DeploymentJob, givenUpAt: number): Promise<{ handle: string } | 'absent'> {
    const mapping = providerMapping(PROTOCOL, job.model.id);
    const mapped = mapping && mapInput(mapping, job.portableInput ?? job.input);
    const prompt = mapped?.ok ? mapped.body.prompt : undefined;
    const model = job.upstreamModel ?? job.model.id;
    const from = givenUpAt - this.submitTimeoutMs - CLOCK_SLACK_MS;
    const to = givenUpAt + CLOCK_SLACK_MS;
    let after: string | undefined;
    for (let page = 0; page < FIND_PAGES; page++) {
      const target = this.http.url(`/videos?limit=100&order=desc${after ? `&after=${encodeURIComponent(after)}` : ''}`);
      const answer = await this.http.json(target, { method: 'GET', timeoutMs: this.options.requestTimeoutMs });
      if (answer.status < 200 || answer.status >= 300)
        throw answerError('GET /videos', answer.status, answer.headers, errorReason(answer.json), this.options.now());
      const list = answer.json as { data?: Video[]; has_more?: boolean } | undefined;
      const videos = Array.isArray(list?.data) ? list.data : [];
      const found = videos.find((video) => {
        const at = (video.created_at ?? 0) * 1000;
        return video.model === model && video.prompt === prompt && at >= from - 1000 && at <= to;
      });
      if (typeof found?.id === 'string') return { handle: found.id };
      const last = videos.at(-1);
      // Newest first: a page that reaches back past the window holds the last candidates.
      if (!list?.has_more || !last?.id || (last.created_at ?? 0) * 1000 < from) return 'absent';
      after = last.id;
    }
    throw new UpstreamError('protocol', `GET /videos: ${FIND_PAGES} pages do not reach back to the submit`);
  }

  private videoUrl(handle: string, suffix = ''): URL {
    return this.http.url(`/videos/${encodeURIComponent(handle)}${suffix}`);
  }

  async poll(handle: string, job: DeploymentJob): Promise<DeploymentStatus> {
    const answer = await this.http.json(this.videoUrl(handle), {
      method: 'GET',
      timeoutMs: this.options.requestTimeoutMs,
      signal: job.requestSignal,
    });
    if (answer.status === 404)
      throw new UpstreamError('lost', 'GET /videos/{id}: the upstream does not know the video (404)', { status: 404 });
    if (answer.status < 200 || answer.status >= 300)
      throw answerError(
        'GET /videos/{id}',
        answer.status,
        answer.headers,
        errorReason(answer.json),
        this.options.now(),
      );
    const video = answer.json as Video | undefined;
    const now = this.options.now();
    if (video?.status === 'queued' || video?.status === 'in_progress') {
      const progress = typeof video.progress === 'number' ? video.progress : 0;
      const since =
        this.submittedAt.get(handle) ?? (typeof video.created_at === 'number' ? video.created_at * 1000 : now);
      const elapsed = now - since;
      const hint = retryAfterMs(answer.headers['retry-after'] as string | undefined, now);
      return {
        state: 'running',
        progress: Math.max(0, Math.min(99, progress)),
        retryAfterMs: nextPollMs({ progress, elapsedMs: elapsed }, hint, this.options.pollFallbackMs),
      };
    }
    this.submittedAt.delete(handle);
    if (video?.status === 'completed') {
      return {
        state: 'succeeded',
        outputs: [
          {
            bytes: this.resultBytes(this.videoUrl(handle, '/content').href, job, { Accept: 'application/binary' }),
            mime: 'video/mp4',
            extension: 'mp4',
          },
        ],
        ...(job.sourceClipSeconds !== undefined ? { sourceClipSeconds: job.sourceClipSeconds } : {}),
      };
    }
    if (video?.status === 'failed')
      return { state: 'failed', reason: video.error?.message ?? 'The provider reported the video failed.' };
    throw new UpstreamError('protocol', `GET /videos/{id}: unknown status ${JSON.stringify(video?.status)}`);
  }

  /** The protocol's only way to stop a video: DELETE (best effort; a relay may refuse it while the video runs). */
  async cancel(handle: string): Promise<void> {
    await this.remove(handle);
  }

  /** DELETE once the bytes are stored: the upstream keeps nothing the service no longer needs. */
  async release(handle: string): Promise<void> {
    await this.remove(handle);
  }

  private async remove(handle: string): Promise<void> {
    const answer = await this.http.json(this.videoUrl(handle), {
      method: 'DELETE',
      timeoutMs: this.options.requestTimeoutMs,
    });
    if (answer.status === 404) return;
    if (answer.status < 200 || answer.status >= 300)
      throw answerError(
        'DELETE /videos/{id}',
        answer.status,
        answer.headers,
        errorReason(answer.json),
        this.options.now(),
      );
  }
}
