import type { ModelInfo } from '../../generated/catalogue.js';
import type { ProviderProfile } from '../../generated/provider-profiles.js';
import type { Deployment, DeploymentJob, DeploymentStatus, ProbeResult } from '../deployments/deployment.js';
import { UpstreamError } from '../deployments/upstream-error.js';
import { jwtSigner } from './jwt-hs256.js';
import { MappedUpstream } from './mapped-upstream.js';
import { firstPollMs, nextPollMs } from './poll-schedule.js';
import { extensionOf, mimeOfLink, type UpstreamOptions } from './upstream-options.js';
import { probeOfError } from './probe-answer.js';
import {
  decodeHandle,
  encodeHandle,
  findMatch,
  profileRequest,
  staticAuth,
  submitPathOf,
  type ProfileOperation,
  type ProfileRequest,
} from './profile-request.js';
import {
  cancelAnswer,
  findByIdAnswer,
  findListAnswer,
  lookupAnswer,
  pollAnswer,
  probeAnswer,
  resultAnswer,
  submitAnswer,
  type ProfileAnswer,
} from './profile-answer.js';

/**
 * One adapter for every provider profile (spec/providers/<name>.yaml with `submit`, emitted into
 * generated/provider-profiles.ts): a thin driver that sends what profile-request.ts builds and
 * hands what comes back to profile-answer.ts, where the profile's rules are (a business code in a
 * 2xx, an unmapped state, a cancel the service did not ask for, a refused cancel). It knows no
 * provider: what differs between them is data.
 */
export class ProfileDeployment extends MappedUpstream implements Deployment {
  readonly kind: string;
  readonly idempotentSubmit: boolean;
  /** The jwt-hs256 scheme's tokens, each told to the upstream's redactor before it is sent. */
  private jwt?: (nowMs: number) => string | undefined;
  /** Set only when the profile has a cancel (absent: the protocol cannot stop a job). */
  readonly cancel?: (handle: string, job: DeploymentJob) => Promise<void>;
  /** Set only when the profile declares `find` (a list call, or a read by the id the submit chose). */
  readonly findJob?: (job: DeploymentJob, givenUpAt: number) => Promise<{ handle: string } | 'absent'>;

  constructor(
    options: UpstreamOptions,
    private readonly profile: ProviderProfile,
  ) {
    super(options, profile.name, { ...profile.headers, ...staticAuth(profile, options.apiKey) });
    this.kind = profile.name;
    this.idempotentSubmit = profile.submit.lookup !== undefined;
    if (profile.cancel) this.cancel = (handle, job) => this.cancelJob(handle, job);
    if (profile.find) this.findJob = (job, givenUpAt) => this.find(job, givenUpAt);
  }

  override accepts(model: ModelInfo): boolean {
    return super.accepts(model) && submitPathOf(this.profile, model) !== undefined;
  }

  override acceptsInput(model: ModelInfo, input: Record<string, unknown>): boolean {
    return submitPathOf(this.profile, model) !== undefined && super.acceptsInput(model, input);
  }

  /** The request of an operation, with a JSON Web Token signed with the time of the request. */
  private request(op: ProfileOperation): ProfileRequest {
    const now = this.options.now();
    let token: string | undefined;
    if (this.profile.auth.scheme === 'jwt-hs256' && this.options.apiKey) {
      this.jwt ??= jwtSigner(this.options.apiKey, this.options.hideDerived);
      token = this.jwt(now);
    }
    return profileRequest(this.profile, op, {
      baseUrl: this.options.baseUrl,
      ...(this.options.apiKey ? { apiKey: this.options.apiKey } : {}),
      ...(token ? { token } : {}),
      now,
    });
  }

  /** Sends a request; `fresh`: a submit's own connection, waiting as long as the upstream's submitTimeoutSeconds. */
  private send(request: ProfileRequest, fresh = false, signal?: AbortSignal): Promise<ProfileAnswer> {
    const json = request.body !== undefined;
    return this.http.json(this.http.url(request.path), {
      method: request.method,
      headers: request.headers,
      ...(json ? { body: Buffer.from(JSON.stringify(request.body)) } : {}),
      timeoutMs: fresh ? this.submitTimeoutMs : this.options.requestTimeoutMs,
      ...(fresh ? { fresh: true } : {}),
      ...(signal ? { signal } : {}),
    });
  }

  async start(job: DeploymentJob): Promise<string> {
    const request = this.request({ operation: 'submit', job });
    const submitPath = request.path;
    let failure: UpstreamError;
    try {
      const answer = await this.send(request, true);
      const read = submitAnswer(this.profile, request.what, answer, this.options.now(), this.http.url(submitPath));
      if ('ids' in read) return encodeHandle({ submitPath, ids: read.ids });
      failure = read.error;
    } catch (error) {
      if (!(error instanceof UpstreamError) || error.failure !== 'ambiguous') throw error;
      failure = error;
    }
    // Unknown outcome, or refused (a submit sent again meets the job it made): the job may exist, found by what the submit sent.
    if (this.profile.submit.lookup && (failure.failure === 'ambiguous' || failure.failure === 'rejected')) {
      const found = await this.lookup(submitPath, job).catch(() => undefined);
      if (found) return found;
    }
    throw failure;
  }

  /** The job a submit made, looked up by what the submit sent (the task's id); undefined when there is none. */
  private async lookup(submitPath: string, job: DeploymentJob): Promise<string | undefined> {
    const answer = await this.send(this.request({ operation: 'lookup', job, submitPath }));
    const ids = lookupAnswer(this.profile, answer);
    return ids ? encodeHandle({ submitPath, ids }) : undefined;
  }

  /**
   * The job a submit whose answer was lost made, found without its handle: by the profile's list
   * call (an item created between the time the submit could have started, its timeout and a minute
   * of clock slack before it was given up, and a minute after, holding what the submit sent), or by
   * the id the submit chose.
   */
  private async find(job: DeploymentJob, givenUpAt: number): Promise<{ handle: string } | 'absent'> {
    const now = this.options.now();
    const submitPath = this.request({ operation: 'submit', job }).path;
    const request = this.request({ operation: 'find', job });
    const answer = await this.send(request);
    const ids =
      this.profile.find && 'list' in this.profile.find
        ? findListAnswer(
            this.profile,
            request.what,
            answer,
            {
              from: givenUpAt - this.submitTimeoutMs - FIND_CLOCK_SLACK_MS,
              to: givenUpAt + FIND_CLOCK_SLACK_MS,
              match: findMatch(this.profile, job, now),
            },
            now,
          )
        : findByIdAnswer(this.profile, request.what, answer, now);
    return ids === 'absent' ? 'absent' : { handle: encodeHandle({ submitPath, ids }) };
  }

  firstPollAfterMs(): number {
    return firstPollMs(undefined, this.options.pollFallbackMs);
  }

  async poll(stored: string, job: DeploymentJob): Promise<DeploymentStatus> {
    const handle = decodeHandle(this.profile, stored);
    const request = this.request({ operation: 'poll', job, handle });
    const answer = await this.send(request, false, job.requestSignal);
    const read = pollAnswer(this.profile, request.what, answer, handle, job, this.options.now());
    switch (read.state) {
      case 'running':
        return {
          state: 'running',
          progress: read.progress,
          retryAfterMs: nextPollMs({ progress: 0, elapsedMs: 0 }, read.retryAfterMs, this.options.pollFallbackMs),
        };
      case 'failed':
      case 'canceled':
        return read;
      case 'succeeded':
        return this.succeeded(read.links, job);
      case 'follow': {
        const follow = this.request({ operation: 'result', job, handle, captured: read.captured });
        const answer = await this.send(follow, false, job.requestSignal);
        return this.succeeded(resultAnswer(this.profile, follow.what, answer, job, this.options.now()), job);
      }
    }
  }

  private succeeded(links: string[], job: DeploymentJob): DeploymentStatus {
    return {
      state: 'succeeded',
      outputs: links.map((link) => {
        const mime = mimeOfLink(link);
        return { bytes: this.resultBytes(link, job), mime, extension: extensionOf(mime) };
      }),
      ...(job.sourceClipSeconds !== undefined ? { sourceClipSeconds: job.sourceClipSeconds } : {}),
    };
  }

  /** The profile's cancel: stopped, unknown to the provider, or refused all end here; other failures are thrown. */
  private async cancelJob(stored: string, job: DeploymentJob): Promise<void> {
    const handle = decodeHandle(this.profile, stored);
    const request = this.request({ operation: 'cancel', job, handle });
    const answer = await this.send(request);
    cancelAnswer(this.profile, request.what, answer, this.options.now());
  }

  /** The profile's probe: a request that creates nothing (reachable, key accepted, path right). */
  async probe(): Promise<ProbeResult> {
    if (!this.profile.probe)
      return { ok: false, outcome: 'not probed', detail: `${this.kind}: the profile has no probe` };
    try {
      const request = this.request({ operation: 'probe' });
      return probeAnswer(this.profile, request.what, await this.send(request));
    } catch (error) {
      return probeOfError(error);
    }
  }
}

/** How far the provider's clock and ours may disagree when a job's creation time is compared with the submit's. */
const FIND_CLOCK_SLACK_MS = 60_000;
