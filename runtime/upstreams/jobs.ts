import { createHash } from 'node:crypto';
import { providerMapping } from '../../generated/provider-mappings.js';
import { MappedUpstream } from './mapped-upstream.js';
import type { Deployment, DeploymentJob, DeploymentStatus, ProbeResult } from '../deployments/deployment.js';
import { mapInput } from './map-input.js';
import { firstPollMs, nextPollMs } from './poll-schedule.js';
import { UpstreamError, retryAfterMs } from '../deployments/upstream-error.js';
import { answerError } from './upstream-http.js';
import { extensionOf, type UpstreamOptions } from './upstream-options.js';

const PROTOCOL = 'jobs';

interface Envelope {
  code?: number;
  msg?: string;
  data?: Record<string, unknown> | null;
}

interface TaskRecord {
  taskId?: string;
  state?: string;
  progress?: number;
  output?: { assets?: { url?: string; mime?: string }[] } | null;
  errorCode?: string;
  errorMessage?: string;
  startedAt?: string | null;
  createdAt?: string;
  updatedAt?: string;
}

/** The envelope's message, with the first field problem when there is one (40001 lists them). */
function envelopeReason(json: unknown): string | undefined {
  const envelope = json as Envelope | undefined;
  if (typeof envelope?.msg !== 'string') return undefined;
  const errors = (envelope.data as { errors?: { path?: string; message?: string }[] } | null | undefined)?.errors;
  const first = Array.isArray(errors) ? errors[0] : undefined;
  return first?.message ? `${envelope.msg} ${first.path ?? ''}: ${first.message}`.replace(/\s+:/, ':') : envelope.msg;
}

/**
 * The createTask / recordInfo protocol of the main API (mediaforge's own, and the hosted service's
 * the specification describes): POST {baseUrl}/jobs/createTask with an Idempotency-Key derived
 * from the task id, so a submit sent again after an unknown outcome finds the same upstream task;
 * GET {baseUrl}/jobs/recordInfo?taskId= until the task ends; the output links (the upstream's own,
 * short-lived) are downloaded at once into the service's store. The protocol has no cancel.
 */
export class JobsDeployment extends MappedUpstream implements Deployment {
  readonly kind = PROTOCOL;
  readonly idempotentSubmit = true;
  /** The upstream's Retry-After of each submit, until the first poll is scheduled. */
  private readonly hints = new Map<string, number>();

  constructor(options: UpstreamOptions) {
    super(options, PROTOCOL, {
      ...(options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {}),
      'Accept-Language': 'en',
    });
  }

  /** The Idempotency-Key of a task at this upstream: the same for every submit of the task, and nobody else's. */
  static idempotencyKey(taskId: string): string {
    return `mf-${createHash('sha256').update(`upstream-submit.${taskId}`).digest('base64url').slice(0, 32)}`;
  }

  /** The probe: the key's list of tasks (GET /jobs, the specification's listing), which creates nothing and needs the key; a baseUrl without `/api/v1` answers 404. */
  probe(): Promise<ProbeResult> {
    return this.probeGet(this.http.url('/jobs?limit=1'), [200]);
  }

  async start(job: DeploymentJob): Promise<string> {
    const mapping = providerMapping(PROTOCOL, job.model.id);
    const mapped = mapping && mapInput(mapping, job.portableInput ?? job.input);
    if (!mapped?.ok)
      throw new UpstreamError('rejected', `${PROTOCOL}: the input cannot be sent`, {
        reason: mapped ? `The provider does not take ${mapped.field} ${JSON.stringify(mapped.value)}.` : undefined,
      });
    const body = {
      model: job.upstreamModel ?? job.model.id,
      input: mapped.body,
      ...(job.upstreamCallbackUrl ? { callBackUrl: job.upstreamCallbackUrl } : {}),
    };
    const target = this.http.url('/jobs/createTask');
    const answer = await this.http.json(target, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': JobsDeployment.idempotencyKey(job.taskId) },
      body: Buffer.from(JSON.stringify(body)),
      timeoutMs: this.submitTimeoutMs,
      fresh: true,
    });
    if (answer.status < 200 || answer.status >= 300)
      throw answerError(
        'createTask',
        answer.status,
        answer.headers,
        envelopeReason(answer.json),
        this.options.now(),
        target,
      );
    const taskId = (answer.json as Envelope | undefined)?.data?.taskId;
    if (typeof taskId !== 'string' || taskId.length === 0)
      throw new UpstreamError('ambiguous', 'createTask: an answer without data.taskId');
    const hint = retryAfterMs(answer.headers['retry-after'] as string | undefined, this.options.now());
    if (hint !== undefined) this.hints.set(job.taskId, hint);
    return taskId;
  }

  /** From the upstream's own hint (Retry-After of the submit): see firstPollMs. */
  firstPollAfterMs(job: DeploymentJob): number {
    const hint = this.hints.get(job.taskId);
    this.hints.delete(job.taskId);
    return firstPollMs(hint, this.options.pollFallbackMs);
  }

  async poll(handle: string, job: DeploymentJob): Promise<DeploymentStatus> {
    const target = this.http.url(`/jobs/recordInfo?taskId=${encodeURIComponent(handle)}`);
    const answer = await this.http.json(target, {
      method: 'GET',
      timeoutMs: this.options.requestTimeoutMs,
      signal: job.requestSignal,
    });
    if (answer.status === 404)
      throw new UpstreamError('lost', 'recordInfo: the upstream does not know the task (404)', { status: 404 });
    if (answer.status < 200 || answer.status >= 300)
      throw answerError('recordInfo', answer.status, answer.headers, envelopeReason(answer.json), this.options.now());
    const record = (answer.json as Envelope | undefined)?.data as TaskRecord | undefined;
    if (!record || typeof record.state !== 'string')
      throw new UpstreamError('protocol', 'recordInfo: an answer without data.state');
    const now = this.options.now();
    if (record.state === 'queued' || record.state === 'running') {
      const progress = typeof record.progress === 'number' ? record.progress : 0;
      // The pace from when the upstream recorded the progress (updatedAt), not from now: a stale figure would push the next poll late.
      const since = Date.parse(record.startedAt ?? record.createdAt ?? '');
      const recorded = Date.parse(record.updatedAt ?? '');
      const at = Number.isNaN(recorded) ? now : Math.min(now, recorded);
      const hint = retryAfterMs(answer.headers['retry-after'] as string | undefined, now);
      const report = { progress, elapsedMs: Number.isNaN(since) ? 0 : at - since, ageMs: now - at };
      return {
        state: 'running',
        progress: Math.max(0, Math.min(99, progress)),
        retryAfterMs: nextPollMs(report, hint, this.options.pollFallbackMs),
      };
    }
    if (record.state === 'succeeded') {
      const assets = (record.output?.assets ?? []).filter(
        (a): a is { url: string; mime?: string } => typeof a?.url === 'string',
      );
      if (assets.length === 0)
        throw new UpstreamError('protocol', 'recordInfo: a succeeded task without output assets');
      return {
        state: 'succeeded',
        outputs: assets.map((asset) => ({
          bytes: this.resultBytes(asset.url, job),
          mime: asset.mime ?? 'video/mp4',
          extension: extensionOf(asset.mime),
        })),
        ...(job.sourceClipSeconds !== undefined ? { sourceClipSeconds: job.sourceClipSeconds } : {}),
      };
    }
    if (record.state === 'expired')
      return { state: 'failed', reason: 'The provider did not finish the task before its deadline.' };
    if (record.state !== 'failed' && record.state !== 'canceled')
      // A state the protocol does not define says nothing of the job: that poll failed, asked again until the deadline.
      throw new UpstreamError('protocol', `recordInfo: unknown state ${JSON.stringify(record.state.slice(0, 40))}`);
    if (record.errorCode === 'reference_invalid' || record.errorCode === 'reference_unreachable') {
      return {
        state: 'failed',
        code: 'reference_invalid',
        reason: record.errorMessage ?? 'The provider could not read a reference file.',
      };
    }
    return { state: 'failed', reason: record.errorMessage ?? `The provider reported the task ${record.state}.` };
  }
}
