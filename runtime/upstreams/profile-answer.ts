import type http from 'node:http';
import { providerMapping } from '../../generated/provider-mappings.js';
import type { ProfileStateRule, ProviderProfile } from '../../generated/provider-profiles.js';
import type { DeploymentJob, ProbeResult } from '../deployments/deployment.js';
import { retryAfterMs, UpstreamError, type FailureClass } from '../deployments/upstream-error.js';
import { valueAtPath, valuesAt } from './json-path.js';
import { usableJobId } from './job-id.js';
import { probeOfAnswer } from './probe-answer.js';
import type { ProfileHandle } from './profile-request.js';
import { answerError } from './upstream-http.js';

/**
 * What a provider profile's answers mean, as data: a profile and an answer (status, headers, parsed
 * JSON body) give the job's handle, its state, progress and result links, or the failure and its
 * class. No I/O: the driver (profile-upstream.ts) receives the answers, profile-request.ts builds
 * what is sent. The rules every profile shares:
 *
 * - A 2xx answer whose body carries a code the profile's `errors` does not call ok is a failure of
 *   the class the profile gives it (busy, unauthorized: fail over; rejected: the task fails);
 *   never a job id, never a success.
 * - A status value the profile does not map is a protocol failure of that poll (the worker logs
 *   it and polls again with backoff until the task's deadline).
 * - A state mapped to `canceled` is a cancel the service did not ask for (the service stops
 *   polling a task it ended): the task fails with a reason the caller understands.
 * - A cancel the provider refuses (a job past the state it cancels in) is no failure: the job runs
 *   on to its own end.
 */

/** An answer as the driver received it: `json` undefined when the body was empty or not JSON. */
export interface ProfileAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  json: unknown;
}

/** A poll's answer, read. `follow`: succeeded, and the links are in a second request's answer (the values it needs). */
export type PollReading =
  | { state: 'running'; progress: number; retryAfterMs?: number }
  | { state: 'failed'; reason: string }
  | { state: 'canceled'; reason?: string }
  | { state: 'succeeded'; links: string[] }
  | { state: 'follow'; captured: Record<string, unknown> };

/** A cancel's answer: stopped, unknown to the provider (nothing to stop), or refused (the job runs on). */
export type CancelReading = 'canceled' | 'gone' | 'refused';

/** A reason as text: a string, or whatever JSON the provider put there. */
const asText = (value: unknown): string | undefined =>
  value === undefined ? undefined : typeof value === 'string' ? value : JSON.stringify(value);

/** Common places of an error's text in a non-2xx answer, for profiles whose `errors` names none. */
const ERROR_TEXT_PATHS = ['error.message', 'message', 'error', 'detail', 'msg'];

const is2xx = (status: number) => status >= 200 && status < 300;

/** A business error inside an answer (its `errors.code` not ok), as an UpstreamError of the profile's class. */
export function businessError(profile: ProviderProfile, json: unknown, what: string): UpstreamError | undefined {
  const errors = profile.errors;
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
export function statusError(
  profile: ProviderProfile,
  what: string,
  answer: ProfileAnswer,
  now: number,
  submitAt?: URL,
): UpstreamError {
  const errors = profile.errors;
  const { status, headers, json } = answer;
  const reasonPath = errors?.reason ? [errors.reason] : ERROR_TEXT_PATHS;
  const reason = reasonPath.map((p) => valueAtPath(json, p)).find((v) => typeof v === 'string') as string | undefined;
  const error = answerError(what, status, headers, reason, now, submitAt);
  const code = errors ? valueAtPath(json, errors.code) : undefined;
  const failure = code !== undefined ? errors?.classes[String(code)] : undefined;
  return failure && failure !== error.failure
    ? new UpstreamError(failure as FailureClass, error.message, error.details)
    : error;
}

/** Reads `handle` (or the lookup's) from an answer; undefined when a value is missing, empty or a dot-segment (./job-id.ts). */
function captured(json: unknown, paths: Record<string, string>): Record<string, string> | undefined {
  const ids: Record<string, string> = {};
  for (const [name, path] of Object.entries(paths)) {
    const value = valueAtPath(json, path);
    if (typeof value !== 'string' && typeof value !== 'number') return undefined;
    if (!usableJobId(String(value))) return undefined;
    ids[name] = String(value);
  }
  return ids;
}

/** A submit's answer: the job's ids, or the failure (`submitAt`: the URL it was sent to). */
export function submitAnswer(
  profile: ProviderProfile,
  what: string,
  answer: ProfileAnswer,
  now: number,
  submitAt: URL,
): { ids: Record<string, string> } | { error: UpstreamError } {
  if (!is2xx(answer.status)) return { error: statusError(profile, what, answer, now, submitAt) };
  const error = businessError(profile, answer.json, what);
  if (error) return { error };
  const handle = profile.submit.handle;
  const ids = captured(answer.json, handle);
  if (!ids)
    return {
      error: new UpstreamError(
        'protocol',
        `${what}: the answer has no usable ${Object.values(handle).join(', ')} (missing, empty or a dot-segment)`,
      ),
    };
  return { ids };
}

/** A lookup's answer: the ids of the job a submit made, or undefined when it found none. */
export function lookupAnswer(profile: ProviderProfile, answer: ProfileAnswer): Record<string, string> | undefined {
  const lookup = profile.submit.lookup;
  if (!lookup || !is2xx(answer.status) || businessError(profile, answer.json, 'lookup')) return undefined;
  return captured(answer.json, lookup.handle);
}

/** The state a rule gives for this answer: a value's, or a condition's on another member. */
function stateOf(rule: ProfileStateRule, json: unknown) {
  if (typeof rule === 'string') return rule;
  const values = valuesAt(json, rule.when);
  const holds = rule.equals === undefined ? values.length > 0 : values.some((v) => String(v) === String(rule.equals));
  return holds ? rule.is : rule.otherwise;
}

/** Removes the job's own identifiers from a provider's reason (the service strips its own too). */
function scrub(text: string, handle: ProfileHandle): string {
  let out = text;
  for (const id of Object.values(handle.ids)) if (id.length >= 6) out = out.split(id).join('');
  return out.trim();
}

/** A poll's answer read; throws the UpstreamError of an answer that says nothing of the job's state. */
export function pollAnswer(
  profile: ProviderProfile,
  what: string,
  answer: ProfileAnswer,
  handle: ProfileHandle,
  job: DeploymentJob,
  now: number,
): PollReading {
  const poll = profile.poll;
  if (answer.status === 404)
    throw new UpstreamError('lost', `${what}: the provider does not know the job (404)`, { status: 404 });
  if (!is2xx(answer.status)) throw statusError(profile, what, answer, now);
  const error = businessError(profile, answer.json, what);
  // A refusal in a status answer ends the job as the provider said (no other deployment runs a started job).
  if (error?.failure === 'rejected')
    return { state: 'failed', reason: scrub(error.details.reason ?? error.message, handle) };
  if (error) throw error;
  const value = valueAtPath(answer.json, poll.state);
  if (value === undefined || typeof value === 'object')
    throw new UpstreamError('protocol', `${what}: no status value at ${poll.state}`);
  const rule = Object.hasOwn(poll.states, String(value)) ? poll.states[String(value)] : undefined;
  if (rule === undefined)
    throw new UpstreamError('protocol', `${what}: unmapped status value ${JSON.stringify(value)} at ${poll.state}`);
  const state = stateOf(rule, answer.json);
  const reason = () => {
    const text = poll.reason ? asText(valueAtPath(answer.json, poll.reason)) : undefined;
    return text ? scrub(text, handle) : undefined;
  };
  switch (state) {
    case 'queued':
    case 'running': {
      const raw = poll.progress ? Number(valueAtPath(answer.json, poll.progress)) : 0;
      const progress = Number.isFinite(raw) ? Math.round((raw * 100) / poll.progressMax) : 0;
      const hint = retryAfterMs(answer.headers['retry-after'] as string | undefined, now);
      return {
        state: 'running',
        progress: state === 'queued' ? 0 : Math.max(0, Math.min(99, progress)),
        ...(hint !== undefined ? { retryAfterMs: hint } : {}),
      };
    }
    case 'failed':
      return { state: 'failed', reason: reason() || 'The provider reported the generation failed.' };
    case 'canceled': {
      const text = reason();
      return text ? { state: 'canceled', reason: text } : { state: 'canceled' };
    }
    case 'succeeded':
      if (profile.result.follow)
        return {
          state: 'follow',
          captured: Object.fromEntries(
            Object.entries(poll.capture).map(([name, p]) => [name, valueAtPath(answer.json, p)]),
          ),
        };
      return { state: 'succeeded', links: resultLinks(profile, answer.json, job) };
  }
}

/** The follow-up read of a succeeded job (`result.follow`): its links; throws as a poll does. */
export function resultAnswer(
  profile: ProviderProfile,
  what: string,
  answer: ProfileAnswer,
  job: DeploymentJob,
  now: number,
): string[] {
  if (!is2xx(answer.status)) throw statusError(profile, what, answer, now);
  const error = businessError(profile, answer.json, what);
  if (error) throw error;
  return resultLinks(profile, answer.json, job);
}

/** The http(s) links at the result path (the model's mapping may name its own); a protocol failure when there is none. */
function resultLinks(profile: ProviderProfile, json: unknown, job: DeploymentJob): string[] {
  const path = providerMapping(profile.name, job.model.id)?.result ?? profile.result.urls;
  const links = valuesAt(json, path).filter((v): v is string => typeof v === 'string' && /^https?:\/\//.test(v));
  if (links.length === 0)
    throw new UpstreamError('protocol', `${profile.name}: a succeeded job without a link at ${path}`);
  return links;
}

/** A cancel's answer; throws the failure of a cancel that neither stopped the job nor was refused. */
export function cancelAnswer(
  profile: ProviderProfile,
  what: string,
  answer: ProfileAnswer,
  now: number,
): CancelReading {
  // A job the provider no longer knows (404) has nothing to stop.
  if (answer.status === 404) return 'gone';
  const error = is2xx(answer.status)
    ? businessError(profile, answer.json, what)
    : statusError(profile, what, answer, now);
  // Refused (a job past the state the provider cancels in): the provider ignored the cancel, and
  // the job runs on to its own end; nothing the task has to learn from it.
  if (error?.failure === 'rejected') return 'refused';
  if (error) throw error;
  return 'canceled';
}

/** A probe's answer: the profile's own statuses, and a refused key told in the body of a 200. */
export function probeAnswer(profile: ProviderProfile, what: string, answer: ProfileAnswer): ProbeResult {
  const probe = profile.probe;
  const found = probeOfAnswer(what, answer.status, probe?.ok ?? []);
  // A provider that answers 200 to a refused key says so in its body (a code in a base envelope):
  // a code of class unauthorized is the key; any other code is the provider answering the made-up request.
  const error = found.ok ? businessError(profile, answer.json, what) : undefined;
  if (error?.failure === 'unauthorized')
    return { ok: false, outcome: 'key refused', status: answer.status, detail: error.message.split(' (')[0] };
  return found;
}

/** When a listed job counts as the submit's: created within [from, to] (Unix ms) and holding `match`. */
export interface FindWindow {
  from: number;
  to: number;
  match: Array<[string, unknown]>;
}

/** An answer to a find, checked as any answer: not 2xx or a business error is an error of its class. */
function findBody(profile: ProviderProfile, what: string, answer: ProfileAnswer, now: number): unknown {
  if (!is2xx(answer.status)) throw statusError(profile, what, answer, now);
  const error = businessError(profile, answer.json, what);
  if (error) throw error;
  return answer.json;
}

/**
 * A `find.list` answer: the ids of the first item created in the window whose `match` members equal
 * what the submit sent. `absent` only when the list reaches back past the window (an older item, or
 * `more` says it ends): a list that stops short is no proof, so it is a protocol failure and the find
 * is asked again until the horizon (runtime/worker/find-job.ts).
 */
export function findListAnswer(
  profile: ProviderProfile,
  what: string,
  answer: ProfileAnswer,
  window: FindWindow,
  now: number,
): Record<string, string> | 'absent' {
  const find = profile.find;
  if (!find || !('list' in find)) throw new UpstreamError('protocol', `${profile.name}: the profile has no find.list`);
  const list = find.list;
  const json = findBody(profile, what, answer, now);
  let older = false;
  for (const item of valuesAt(json, list.items)) {
    const at = createdAtMs(valueAtPath(item, list.createdAt));
    if (at === undefined) continue;
    if (at < window.from) older = true;
    if (at < window.from || at > window.to) continue;
    if (!window.match.every(([member, want]) => sameValue(valueAtPath(item, member), want))) continue;
    const ids = captured(item, list.handle);
    if (!ids) throw new UpstreamError('protocol', `${what}: a matching job without a usable handle`);
    return ids;
  }
  const more = list.more === undefined ? undefined : valueAtPath(json, list.more);
  if (older || more === false || more === 'false') return 'absent';
  throw new UpstreamError('protocol', `${what}: the list does not reach back to the submit`);
}

/** A `find.byId` answer: the ids of the job read by the id the submit chose, `absent` on the statuses the profile names. */
export function findByIdAnswer(
  profile: ProviderProfile,
  what: string,
  answer: ProfileAnswer,
  now: number,
): Record<string, string> | 'absent' {
  const find = profile.find;
  if (!find || !('byId' in find)) throw new UpstreamError('protocol', `${profile.name}: the profile has no find.byId`);
  const byId = find.byId;
  if (byId.absent.includes(answer.status)) return 'absent';
  const ids = captured(findBody(profile, what, answer, now), byId.handle);
  if (!ids)
    throw new UpstreamError('protocol', `${what}: the answer has no usable ${Object.values(byId.handle).join(', ')}`);
  return ids;
}

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
