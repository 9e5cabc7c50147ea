import type http from 'node:http';
import type { ModelInfo } from '../../generated/catalogue.js';
import { providerMapping } from '../../generated/provider-mappings.js';
import type { ProfileStateRule, ProviderProfile } from '../../generated/provider-profiles.js';
import type { Deployment, DeploymentJob, DeploymentStatus, ProbeResult } from '../deployments/deployment.js';
import { UpstreamError, type FailureClass } from '../deployments/upstream-error.js';
import { valueAtPath, valuesAt } from './json-path.js';
import { usableJobId } from './job-id.js';
import { jwtSigner } from './jwt-hs256.js';
import { mapField, mapInput } from './map-input.js';
import { MappedUpstream } from './mapped-upstream.js';
import { firstPollMs, nextPollMs } from './poll-schedule.js';
import { fillPath, fillTemplate, namedInputFields, type Names } from './profile-template.js';
import { answerError } from './upstream-http.js';
import { extensionOf, mimeOfLink, type UpstreamOptions } from './upstream-options.js';
import { retryAfterMs } from '../deployments/upstream-error.js';
import { probeOfAnswer, probeOfError } from './probe-answer.js';

/** What is stored on the task: the submit's path (polls may repeat it) and the values `handle` captured. */
interface ProfileHandle {
  submitPath: string;
  ids: Record<string, string>;
}

const isMap = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A reason as text: a string, or whatever JSON the provider put there. */
const asText = (value: unknown): string | undefined =>
  value === undefined ? undefined : typeof value === 'string' ? value : JSON.stringify(value);

/** Common places of an error's text in a non-2xx answer, for profiles whose `errors` names none. */
const ERROR_TEXT_PATHS = ['error.message', 'message', 'error', 'detail', 'msg'];

/**
 * One adapter for every provider profile (spec/providers/<name>.yaml with `submit`, emitted into
 * generated/provider-profiles.ts): it fills the profile's templates, sends its requests, reads its
 * JSON paths. It knows no provider: what differs between them is data.
 *
 * - A 2xx answer whose body carries a code the profile's `errors` does not call ok is a failure of
 *   the class the profile gives it (busy, unauthorized: fail over; rejected: the task fails);
 *   never a job id, never a success.
 * - A status value the profile does not map is a protocol failure of that poll (the worker logs
 *   it and polls again with backoff until the task's deadline).
 * - A state mapped to `canceled` is a cancel the service did not ask for (the service stops
 *   polling a task it ended): the task fails with a reason the caller understands.
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
    const find = profile.find;
    if (find)
      this.findJob = (job, givenUpAt) =>
        'list' in find ? this.findInList(find.list, job, givenUpAt) : this.findById(find.byId, job);
  }

  override accepts(model: ModelInfo): boolean {
    return super.accepts(model) && this.submitPathOf(model) !== undefined;
  }

  override acceptsInput(model: ModelInfo, input: Record<string, unknown>): boolean {
    return this.submitPathOf(model) !== undefined && super.acceptsInput(model, input);
  }

  /** The submit's path for a model: the profile's one path, or the one of the model's mode. */
  private submitPathOf(model: ModelInfo): string | undefined {
    const path = this.profile.submit.path;
    return typeof path === 'string' ? path : Object.hasOwn(path, model.mode) ? path[model.mode] : undefined;
  }

  /** Headers computed per request: a JSON Web Token is signed with the time of the request. */
  private requestHeaders(json: boolean): Record<string, string> {
    const headers: Record<string, string> = json ? { 'Content-Type': 'application/json' } : {};
    if (this.profile.auth.scheme === 'jwt-hs256' && this.options.apiKey) {
      this.jwt ??= jwtSigner(this.options.apiKey, this.options.hideDerived);
      const token = this.jwt(this.options.now());
      if (token) headers.Authorization = `Bearer ${token}`;
    }
    return headers;
  }

  /** The body template of a model's submit: the profile's one, or its mode's. */
  private bodyOf(model: ModelInfo): unknown {
    const { body, bodyByMode } = this.profile.submit;
    if (!bodyByMode) return body;
    const byMode = body as Record<string, unknown>;
    return Object.hasOwn(byMode, model.mode) ? byMode[model.mode] : undefined;
  }

  /** The names of a submit: the job's own and the input's (a field the body names by itself is not repeated in {input}). */
  private submitNames(job: DeploymentJob, body: unknown): Names {
    const named = namedInputFields(body);
    const mapping = providerMapping(this.profile.name, job.model.id);
    if (!mapping) throw new UpstreamError('rejected', `${this.kind}: the model ${job.model.id} cannot be sent`);
    const input = job.portableInput ?? job.input;
    const rest = Object.fromEntries(Object.entries(input).filter(([field]) => !named.includes(field)));
    const mapped = mapInput(mapping, rest);
    if (!mapped.ok)
      throw new UpstreamError('rejected', `${this.kind}: the input cannot be sent`, {
        reason: `The provider does not take ${mapped.field} ${JSON.stringify(mapped.value)}.`,
      });
    const bounds = this.profile.submit.deadlineSeconds;
    const left =
      job.deadlineAt !== undefined ? Math.max(0, Math.floor((job.deadlineAt - this.options.now()) / 1000)) : undefined;
    const deadlineSeconds =
      left === undefined ? undefined : bounds ? Math.max(bounds.min, Math.min(bounds.max, left)) : left;
    return (name) => {
      if (name.startsWith('input.')) return mapField(mapping, name.slice(6), input[name.slice(6)]);
      switch (name) {
        case 'input':
          return mapped.body;
        case 'upstreamModel':
          return job.upstreamModel ?? job.model.id;
        case 'taskId':
          return job.taskId;
        case 'upstreamCallbackUrl':
          return job.upstreamCallbackUrl;
        case 'deadlineSeconds':
          return deadlineSeconds;
        default:
          return undefined;
      }
    };
  }

  /** The names known once a job exists: its handle, the submit's path, the task's id and the upstream's model. */
  private handleNames(ref: ProfileHandle, job: DeploymentJob, extra: Record<string, unknown> = {}): Names {
    return (name) => {
      if (Object.hasOwn(extra, name)) return extra[name];
      if (Object.hasOwn(ref.ids, name)) return ref.ids[name];
      if (name === 'submitPath') return ref.submitPath;
      if (name === 'taskId') return job.taskId;
      if (name === 'upstreamModel') return job.upstreamModel ?? job.model.id;
      return undefined;
    };
  }

  /** A JSON request to a path under the base URL. */
  private call(method: string, path: string, body: unknown, fresh = false, signal?: AbortSignal) {
    const json = body !== undefined;
    return this.http.json(this.http.url(path), {
      method: method as 'GET',
      headers: this.requestHeaders(json),
      ...(json ? { body: Buffer.from(JSON.stringify(body)) } : {}),
      // A fresh connection is a submit's: it waits as long as the upstream's submitTimeoutSeconds.
      timeoutMs: fresh ? this.submitTimeoutMs : this.options.requestTimeoutMs,
      ...(fresh ? { fresh: true } : {}),
      ...(signal ? { signal } : {}),
    });
  }

  /** A business error inside an answer (its `errors.code` not ok), as an UpstreamError of the profile's class. */
  private bodyError(json: unknown, what: string): UpstreamError | undefined {
    const errors = this.profile.errors;
    if (!errors) return undefined;
    const code = valueAtPath(json, errors.code);
    if (code === undefined || errors.ok.some((ok) => String(ok) === String(code))) return undefined;
    const failure = (errors.classes[String(code)] ?? errors.otherwise) as FailureClass;
    const reason = asText(errors.reason ? valueAtPath(json, errors.reason) : undefined);
    return new UpstreamError(failure, `${what}: code ${String(code)}${reason ? ` (${reason.slice(0, 200)})` : ''}`, {
      ...(reason ? { reason } : {}),
    });
  }

  /** The error of an answer that is not 2xx: by its status, unless its body has a code the profile classes; `submitAt`: a submit's URL (404, 405: configuration). */
  private statusError(
    what: string,
    status: number,
    headers: http.IncomingHttpHeaders,
    json: unknown,
    submitAt?: URL,
  ): UpstreamError {
    const errors = this.profile.errors;
    const reasonPath = errors?.reason ? [errors.reason] : ERROR_TEXT_PATHS;
    const reason = reasonPath.map((p) => valueAtPath(json, p)).find((v) => typeof v === 'string') as string | undefined;
    const error = answerError(what, status, headers, reason, this.options.now(), submitAt);
    const code = errors ? valueAtPath(json, errors.code) : undefined;
    const failure = code !== undefined ? errors?.classes[String(code)] : undefined;
    return failure && failure !== error.failure
      ? new UpstreamError(failure as FailureClass, error.message, error.details)
      : error;
  }

  /** Reads `handle` (or the lookup's) from an answer; undefined when a value is missing, empty or a dot-segment (./job-id.ts). */
  private captured(json: unknown, paths: Record<string, string>): Record<string, string> | undefined {
    const ids: Record<string, string> = {};
    for (const [name, path] of Object.entries(paths)) {
      const value = valueAtPath(json, path);
      if (typeof value !== 'string' && typeof value !== 'number') return undefined;
      if (!usableJobId(String(value))) return undefined;
      ids[name] = String(value);
    }
    return ids;
  }

  async start(job: DeploymentJob): Promise<string> {
    const submit = this.profile.submit;
    const template = this.submitPathOf(job.model);
    if (!template) throw new UpstreamError('rejected', `${this.kind}: the mode ${job.model.mode} has no submit path`);
    const bodyTemplate = this.bodyOf(job.model);
    const names = this.submitNames(job, bodyTemplate);
    const submitPath = fillPath(template, names);
    if (submitPath === undefined) throw new UpstreamError('rejected', `${this.kind}: the submit path cannot be filled`);
    const body = bodyTemplate === undefined ? undefined : (fillTemplate(bodyTemplate, names) ?? {});
    const what = `${submit.method} ${submitPath}`;
    let failure: UpstreamError;
    try {
      const answer = await this.call(submit.method, submitPath, body, true);
      if (answer.status < 200 || answer.status >= 300)
        failure = this.statusError(what, answer.status, answer.headers, answer.json, this.http.url(submitPath));
      else {
        const error = this.bodyError(answer.json, what);
        if (!error) {
          const ids = this.captured(answer.json, submit.handle);
          if (!ids)
            throw new UpstreamError(
              'protocol',
              `${what}: the answer has no usable ${Object.values(submit.handle).join(', ')} (missing, empty or a dot-segment)`,
            );
          return JSON.stringify({ submitPath, ids } satisfies ProfileHandle);
        }
        failure = error;
      }
    } catch (error) {
      if (!(error instanceof UpstreamError) || error.failure !== 'ambiguous') throw error;
      failure = error;
    }
    // Unknown outcome, or refused (a submit sent again meets the job it made): the job may exist, found by what the submit sent.
    if (submit.lookup && (failure.failure === 'ambiguous' || failure.failure === 'rejected')) {
      const found = await this.lookup(submitPath, job).catch(() => undefined);
      if (found) return found;
    }
    throw failure;
  }

  /** The job a submit made, looked up by what the submit sent (the task's id); undefined when there is none. */
  private async lookup(submitPath: string, job: DeploymentJob): Promise<string | undefined> {
    const lookup = this.profile.submit.lookup!;
    const path = fillPath(lookup.path, (name) =>
      name === 'submitPath'
        ? submitPath
        : name === 'taskId'
          ? job.taskId
          : name === 'upstreamModel'
            ? (job.upstreamModel ?? job.model.id)
            : undefined,
    );
    if (!path) return undefined;
    const answer = await this.call(lookup.method, path, undefined);
    if (answer.status < 200 || answer.status >= 300 || this.bodyError(answer.json, 'lookup')) return undefined;
    const ids = this.captured(answer.json, lookup.handle);
    return ids ? JSON.stringify({ submitPath, ids } satisfies ProfileHandle) : undefined;
  }

  /** A find's names (the submit's) and the handle's submit path for this job's model. */
  private findNames(job: DeploymentJob): { names: Names; submitPath: string } {
    const template = this.submitPathOf(job.model);
    const names = this.submitNames(job, this.bodyOf(job.model));
    const submitPath = template === undefined ? undefined : fillPath(template, names);
    if (submitPath === undefined) throw new UpstreamError('rejected', `${this.kind}: the submit path cannot be filled`);
    return { names, submitPath };
  }

  /** A find's answer, checked as any answer: not 2xx or a business error is an error of its class. */
  private async findAnswer(method: string, path: string, what: string, absent: number[] = []) {
    const answer = await this.call(method, path, undefined);
    if (absent.includes(answer.status)) return 'absent' as const;
    if (answer.status < 200 || answer.status >= 300)
      throw this.statusError(what, answer.status, answer.headers, answer.json);
    const error = this.bodyError(answer.json, what);
    if (error) throw error;
    return answer.json;
  }

  /**
   * The job among the key's jobs: an item created between the time the submit could have started
   * (its timeout and a minute of clock slack before it was given up) and a minute after, whose
   * `match` members equal what the submit sent. `absent` only when the list reaches back past that
   * window (an older item, or `more` says it ends): a list that stops short is no proof, and the
   * find is asked again until the horizon (runtime/worker/find-job.ts).
   */
  private async findInList(
    list: Extract<NonNullable<ProviderProfile['find']>, { list: unknown }>['list'],
    job: DeploymentJob,
    givenUpAt: number,
  ): Promise<{ handle: string } | 'absent'> {
    const { names, submitPath } = this.findNames(job);
    const path = fillPath(list.path, names);
    if (!path) throw new UpstreamError('protocol', `${this.kind}: the list path cannot be filled`);
    const what = `${list.method} ${list.path}`;
    const json = await this.findAnswer(list.method, path, what);
    const from = givenUpAt - this.submitTimeoutMs - FIND_CLOCK_SLACK_MS;
    const to = givenUpAt + FIND_CLOCK_SLACK_MS;
    const wanted = Object.entries(list.match).map(([member, template]) => [member, fillTemplate(template, names)]);
    let older = false;
    for (const item of valuesAt(json, list.items)) {
      const at = createdAtMs(valueAtPath(item, list.createdAt));
      if (at === undefined) continue;
      if (at < from) older = true;
      if (at < from || at > to) continue;
      if (!wanted.every(([member, want]) => sameValue(valueAtPath(item, member as string), want))) continue;
      const ids = this.captured(item, list.handle);
      if (!ids) throw new UpstreamError('protocol', `${what}: a matching job without a usable handle`);
      return { handle: JSON.stringify({ submitPath, ids } satisfies ProfileHandle) };
    }
    const more = list.more === undefined ? undefined : valueAtPath(json, list.more);
    if (older || more === false || more === 'false') return 'absent';
    throw new UpstreamError('protocol', `${what}: the list does not reach back to the submit`);
  }

  /** The job read by the id the submit chose (the task's id, written into the request): `absent` on the statuses the profile names. */
  private async findById(
    byId: Extract<NonNullable<ProviderProfile['find']>, { byId: unknown }>['byId'],
    job: DeploymentJob,
  ): Promise<{ handle: string } | 'absent'> {
    const { names, submitPath } = this.findNames(job);
    const path = fillPath(byId.path, names);
    if (!path) throw new UpstreamError('protocol', `${this.kind}: the find path cannot be filled`);
    const what = `${byId.method} ${byId.path}`;
    const json = await this.findAnswer(byId.method, path, what, byId.absent);
    if (json === 'absent') return 'absent';
    const ids = this.captured(json, byId.handle);
    if (!ids)
      throw new UpstreamError('protocol', `${what}: the answer has no usable ${Object.values(byId.handle).join(', ')}`);
    return { handle: JSON.stringify({ submitPath, ids } satisfies ProfileHandle) };
  }

  firstPollAfterMs(): number {
    return firstPollMs(undefined, this.options.pollFallbackMs);
  }

  private parse(handle: string): ProfileHandle {
    try {
      const parsed = JSON.parse(handle) as ProfileHandle;
      if (typeof parsed.submitPath === 'string' && isMap(parsed.ids)) return parsed;
    } catch {
      // Reported below.
    }
    throw new UpstreamError('protocol', `${this.kind}: the stored handle is not one of this profile's`);
  }

  /** The state a rule gives for this answer: a value's, or a condition's on another member. */
  private stateOf(rule: ProfileStateRule, json: unknown) {
    if (typeof rule === 'string') return rule;
    const values = valuesAt(json, rule.when);
    const holds = rule.equals === undefined ? values.length > 0 : values.some((v) => String(v) === String(rule.equals));
    return holds ? rule.is : rule.otherwise;
  }

  async poll(handle: string, job: DeploymentJob): Promise<DeploymentStatus> {
    const ref = this.parse(handle);
    const poll = this.profile.poll;
    const path = fillPath(poll.path, this.handleNames(ref, job));
    if (!path) throw new UpstreamError('protocol', `${this.kind}: the handle does not fill the poll path`);
    const what = `${poll.method} ${poll.path}`;
    const answer = await this.call(poll.method, path, undefined, false, job.requestSignal);
    if (answer.status === 404)
      throw new UpstreamError('lost', `${what}: the provider does not know the job (404)`, { status: 404 });
    if (answer.status < 200 || answer.status >= 300)
      throw this.statusError(what, answer.status, answer.headers, answer.json);
    const error = this.bodyError(answer.json, what);
    // A refusal in a status answer ends the job as the provider said (no other deployment runs a started job).
    if (error?.failure === 'rejected')
      return { state: 'failed', reason: this.scrub(error.details.reason ?? error.message, ref) };
    if (error) throw error;
    const value = valueAtPath(answer.json, poll.state);
    if (value === undefined || typeof value === 'object')
      throw new UpstreamError('protocol', `${what}: no status value at ${poll.state}`);
    const rule = Object.hasOwn(poll.states, String(value)) ? poll.states[String(value)] : undefined;
    if (rule === undefined)
      throw new UpstreamError('protocol', `${what}: unmapped status value ${JSON.stringify(value)} at ${poll.state}`);
    const state = this.stateOf(rule, answer.json);
    const reason = () => {
      const text = poll.reason ? asText(valueAtPath(answer.json, poll.reason)) : undefined;
      return text ? this.scrub(text, ref) : undefined;
    };
    switch (state) {
      case 'queued':
      case 'running': {
        const raw = poll.progress ? Number(valueAtPath(answer.json, poll.progress)) : 0;
        const progress = Number.isFinite(raw) ? Math.round((raw * 100) / poll.progressMax) : 0;
        const hint = retryAfterMs(answer.headers['retry-after'] as string | undefined, this.options.now());
        return {
          state: 'running',
          progress: state === 'queued' ? 0 : Math.max(0, Math.min(99, progress)),
          retryAfterMs: nextPollMs({ progress: 0, elapsedMs: 0 }, hint, this.options.pollFallbackMs),
        };
      }
      case 'failed':
        return { state: 'failed', reason: reason() || 'The provider reported the generation failed.' };
      case 'canceled': {
        const text = reason();
        return text ? { state: 'canceled', reason: text } : { state: 'canceled' };
      }
      case 'succeeded':
        return this.succeeded(answer.json, ref, job);
    }
  }

  /** Removes the job's own identifiers from a provider's reason (the service strips its own too). */
  private scrub(text: string, ref: ProfileHandle): string {
    let out = text;
    for (const id of Object.values(ref.ids)) if (id.length >= 6) out = out.split(id).join('');
    return out.trim();
  }

  private async succeeded(json: unknown, ref: ProfileHandle, job: DeploymentJob): Promise<DeploymentStatus> {
    const result = this.profile.result;
    let source = json;
    let path = providerMapping(this.profile.name, job.model.id)?.result ?? result.urls;
    if (result.follow) {
      const captured = Object.fromEntries(
        Object.entries(this.profile.poll.capture).map(([name, p]) => [name, valueAtPath(json, p)]),
      );
      const followPath = fillPath(result.follow.path, this.handleNames(ref, job, captured));
      if (!followPath)
        throw new UpstreamError('protocol', `${this.kind}: a succeeded job without what the follow-up needs`);
      const what = `${result.follow.method} ${result.follow.path}`;
      const answer = await this.call(result.follow.method, followPath, undefined, false, job.requestSignal);
      if (answer.status < 200 || answer.status >= 300)
        throw this.statusError(what, answer.status, answer.headers, answer.json);
      const error = this.bodyError(answer.json, what);
      if (error) throw error;
      source = answer.json;
    }
    const links = valuesAt(source, path).filter((v): v is string => typeof v === 'string' && /^https?:\/\//.test(v));
    if (links.length === 0)
      throw new UpstreamError('protocol', `${this.kind}: a succeeded job without a link at ${path}`);
    return {
      state: 'succeeded',
      outputs: links.map((link) => {
        const mime = mimeOfLink(link);
        return { bytes: this.resultBytes(link, job), mime, extension: extensionOf(mime) };
      }),
      ...(job.sourceClipSeconds !== undefined ? { sourceClipSeconds: job.sourceClipSeconds } : {}),
    };
  }

  /** The profile's cancel; a job the provider no longer knows (404) has nothing to stop. */
  private async cancelJob(handle: string, job: DeploymentJob): Promise<void> {
    const cancel = this.profile.cancel!;
    const ref = this.parse(handle);
    const path = fillPath(cancel.path, this.handleNames(ref, job));
    if (!path) throw new UpstreamError('protocol', `${this.kind}: the handle does not fill the cancel path`);
    const what = `${cancel.method} ${cancel.path}`;
    const answer = await this.call(cancel.method, path, cancel.method === 'POST' ? {} : undefined);
    if (answer.status === 404) return;
    const error =
      answer.status < 200 || answer.status >= 300
        ? this.statusError(what, answer.status, answer.headers, answer.json)
        : this.bodyError(answer.json, what);
    // Refused (a job past the state the provider cancels in): the provider ignored the cancel, and
    // the job runs on to its own end; nothing the task has to learn from it.
    if (error && error.failure !== 'rejected') throw error;
  }

  /** The profile's probe: a request that creates nothing (reachable, key accepted, path right). */
  async probe(): Promise<ProbeResult> {
    const probe = this.profile.probe;
    if (!probe) return { ok: false, outcome: 'not probed', detail: `${this.kind}: the profile has no probe` };
    try {
      const answer = await this.call(probe.method, probe.path, undefined);
      const found = probeOfAnswer(`${probe.method} ${probe.path}`, answer.status, probe.ok);
      // A provider that answers 200 to a refused key says so in its body (a code in a base envelope):
      // a code of class unauthorized is the key; any other code is the provider answering the made-up request.
      const error = found.ok ? this.bodyError(answer.json, `${probe.method} ${probe.path}`) : undefined;
      if (error?.failure === 'unauthorized')
        return { ok: false, outcome: 'key refused', status: answer.status, detail: error.message.split(' (')[0] };
      return found;
    } catch (error) {
      return probeOfError(error);
    }
  }
}

/** How far the provider's clock and ours may disagree when a job's creation time is compared with the submit's. */
const FIND_CLOCK_SLACK_MS = 60_000;

/** A job's creation time as the provider writes it: ISO 8601 text, or Unix seconds (or milliseconds, past 10^12). */
function createdAtMs(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value < 1e12 ? value * 1000 : value;
  if (typeof value === 'string') {
    if (/^\d+(\.\d+)?$/.test(value)) return createdAtMs(Number(value));
    const at = Date.parse(value);
    return Number.isNaN(at) ? undefined : at;
  }
  return undefined;
}

/** Whether an item's member holds what the submit sent there (absent sent: the member is absent or null). */
function sameValue(have: unknown, want: unknown): boolean {
  if (want === undefined) return have === undefined || have === null;
  if (typeof want === 'object' || typeof have === 'object') return JSON.stringify(have) === JSON.stringify(want);
  return String(have) === String(want);
}

/** The auth headers that do not change per request (every scheme but jwt-hs256). */
function staticAuth(profile: ProviderProfile, apiKey: string | undefined): Record<string, string> {
  if (!apiKey) return {};
  switch (profile.auth.scheme) {
    case 'bearer':
      return { Authorization: `Bearer ${apiKey}` };
    case 'key':
      return { Authorization: `Key ${apiKey}` };
    case 'header':
      return { [profile.auth.header!]: apiKey };
    default:
      return {};
  }
}
