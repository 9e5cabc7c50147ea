import type { ModelInfo } from '../../generated/catalogue.js';
import { providerMapping } from '../../generated/provider-mappings.js';
import type { ProfileMethod, ProviderProfile } from '../../generated/provider-profiles.js';
import type { DeploymentJob } from '../deployments/deployment.js';
import { UpstreamError } from '../deployments/upstream-error.js';
import { mapField, mapInput } from './map-input.js';
import { fillPath, fillTemplate, namedInputFields, type Names } from './profile-template.js';

/**
 * The requests of a provider profile (spec/providers/<name>.yaml, generated/provider-profiles.ts),
 * as data: a profile, an operation and what the operation knows (the job, the stored handle) give
 * the method, URL, headers and JSON body to send. No I/O: the driver (profile-upstream.ts) sends
 * them, profile-answer.ts reads what comes back.
 */

/** What is stored on the task: the submit's path (polls may repeat it) and the values `handle` captured. */
export interface ProfileHandle {
  submitPath: string;
  ids: Record<string, string>;
}

/** What every request of one upstream is built with. */
export interface RequestContext {
  /** The deployment's baseUrl (paths are appended to it). */
  baseUrl: string;
  /** The operator's key (bearer, key, header schemes). */
  apiKey?: string;
  /** The jwt-hs256 scheme's token for this request, signed by the driver (it tells the redactor). */
  token?: string;
  /** Unix ms: the seconds left to a job's deadline are counted from it. */
  now: number;
}

/** One operation of the profile, with what it needs. `result` is a succeeded poll's follow-up read. */
export type ProfileOperation =
  | { operation: 'submit'; job: DeploymentJob }
  | { operation: 'lookup'; job: DeploymentJob; submitPath: string }
  | { operation: 'poll'; job: DeploymentJob; handle: ProfileHandle }
  | { operation: 'result'; job: DeploymentJob; handle: ProfileHandle; captured: Record<string, unknown> }
  | { operation: 'cancel'; job: DeploymentJob; handle: ProfileHandle }
  | { operation: 'find'; job: DeploymentJob }
  | { operation: 'probe' };

export interface ProfileRequest {
  method: ProfileMethod;
  /** The path under the base URL, filled. */
  path: string;
  url: string;
  headers: Record<string, string>;
  /** The JSON body; absent: none is sent. */
  body?: unknown;
  /** How errors name the request (a poll's and a cancel's by their templates: no job id in a message). */
  what: string;
}

/** The submit's path template for a model: the profile's one path, or the one of the model's mode. */
export function submitPathOf(profile: ProviderProfile, model: ModelInfo): string | undefined {
  const path = profile.submit.path;
  return typeof path === 'string' ? path : Object.hasOwn(path, model.mode) ? path[model.mode] : undefined;
}

/** The auth headers that do not change per request (every scheme but jwt-hs256). */
export function staticAuth(profile: ProviderProfile, apiKey: string | undefined): Record<string, string> {
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

/** The stored handle of a job, as the task keeps it. */
export function encodeHandle(handle: ProfileHandle): string {
  return JSON.stringify(handle);
}

const isMap = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A stored handle read back; a protocol failure when it is not one of a profile's. */
export function decodeHandle(profile: ProviderProfile, handle: string): ProfileHandle {
  try {
    const parsed = JSON.parse(handle) as ProfileHandle;
    if (typeof parsed.submitPath === 'string' && isMap(parsed.ids)) return parsed;
  } catch {
    // Reported below.
  }
  throw new UpstreamError('protocol', `${profile.name}: the stored handle is not one of this profile's`);
}

/** The request of one operation; throws UpstreamError when the job cannot be put in the profile's terms. */
export function profileRequest(
  profile: ProviderProfile,
  op: ProfileOperation,
  context: RequestContext,
): ProfileRequest {
  const request = (method: ProfileMethod, path: string, body: unknown, what: string): ProfileRequest => ({
    method,
    path,
    url: context.baseUrl.replace(/\/+$/, '') + path,
    headers: headersOf(profile, context, body !== undefined),
    ...(body !== undefined ? { body } : {}),
    what,
  });
  switch (op.operation) {
    case 'submit': {
      const { job } = op;
      const template = submitPathOf(profile, job.model);
      if (!template)
        throw new UpstreamError('rejected', `${profile.name}: the mode ${job.model.mode} has no submit path`);
      const bodyTemplate = bodyOf(profile, job.model);
      const names = submitNames(profile, job, bodyTemplate, context.now);
      const submitPath = fillPath(template, names);
      if (submitPath === undefined)
        throw new UpstreamError('rejected', `${profile.name}: the submit path cannot be filled`);
      const body = bodyTemplate === undefined ? undefined : (fillTemplate(bodyTemplate, names) ?? {});
      return request(profile.submit.method, submitPath, body, `${profile.submit.method} ${submitPath}`);
    }
    case 'lookup': {
      const lookup = profile.submit.lookup;
      const { job, submitPath } = op;
      const path = lookup && fillPath(lookup.path, jobNames({ submitPath, ids: {} }, job));
      if (!lookup || !path) throw new UpstreamError('protocol', `${profile.name}: no lookup of a submitted job`);
      return request(lookup.method, path, undefined, 'lookup');
    }
    case 'poll': {
      const poll = profile.poll;
      const path = fillPath(poll.path, jobNames(op.handle, op.job));
      if (!path) throw new UpstreamError('protocol', `${profile.name}: the handle does not fill the poll path`);
      return request(poll.method, path, undefined, `${poll.method} ${poll.path}`);
    }
    case 'result': {
      const follow = profile.result.follow;
      const path = follow && fillPath(follow.path, jobNames(op.handle, op.job, op.captured));
      if (!follow || !path)
        throw new UpstreamError('protocol', `${profile.name}: a succeeded job without what the follow-up needs`);
      return request(follow.method, path, undefined, `${follow.method} ${follow.path}`);
    }
    case 'cancel': {
      const cancel = profile.cancel;
      if (!cancel) throw new UpstreamError('protocol', `${profile.name}: the profile has no cancel`);
      const path = fillPath(cancel.path, jobNames(op.handle, op.job));
      if (!path) throw new UpstreamError('protocol', `${profile.name}: the handle does not fill the cancel path`);
      // A POST carries an empty object: some providers refuse a POST without a JSON body.
      return request(cancel.method, path, cancel.method === 'POST' ? {} : undefined, `${cancel.method} ${cancel.path}`);
    }
    case 'find': {
      const find = profile.find;
      if (!find) throw new UpstreamError('protocol', `${profile.name}: the profile has no find`);
      const call = 'list' in find ? find.list : find.byId;
      const path = fillPath(call.path, submitNames(profile, op.job, bodyOf(profile, op.job.model), context.now));
      if (!path) throw new UpstreamError('protocol', `${profile.name}: the find path cannot be filled`);
      return request(call.method, path, undefined, `${call.method} ${call.path}`);
    }
    case 'probe': {
      const probe = profile.probe;
      if (!probe) throw new UpstreamError('protocol', `${profile.name}: the profile has no probe`);
      return request(probe.method, probe.path, undefined, `${probe.method} ${probe.path}`);
    }
  }
}

/**
 * What a listed job must hold to be the one a submit made: each `match` member of the profile's
 * `find.list` and the value the submit sent there (undefined: sent nothing, so absent or null).
 */
export function findMatch(profile: ProviderProfile, job: DeploymentJob, now: number): Array<[string, unknown]> {
  const find = profile.find;
  if (!find || !('list' in find)) return [];
  const names = submitNames(profile, job, bodyOf(profile, job.model), now);
  return Object.entries(find.list.match).map(([member, template]) => [member, fillTemplate(template, names)]);
}

/** The profile's headers, its auth, and a JSON body's type. */
function headersOf(profile: ProviderProfile, context: RequestContext, json: boolean): Record<string, string> {
  const headers: Record<string, string> = { ...profile.headers, ...staticAuth(profile, context.apiKey) };
  if (json) headers['Content-Type'] = 'application/json';
  if (profile.auth.scheme === 'jwt-hs256' && context.token) headers.Authorization = `Bearer ${context.token}`;
  return headers;
}

/** The body template of a model's submit: the profile's one, or its mode's. */
function bodyOf(profile: ProviderProfile, model: ModelInfo): unknown {
  const { body, bodyByMode } = profile.submit;
  if (!bodyByMode) return body;
  const byMode = body as Record<string, unknown>;
  return Object.hasOwn(byMode, model.mode) ? byMode[model.mode] : undefined;
}

/** The names of a submit: the job's own and the input's (a field the body names by itself is not repeated in {input}). */
function submitNames(profile: ProviderProfile, job: DeploymentJob, body: unknown, now: number): Names {
  const named = namedInputFields(body);
  const mapping = providerMapping(profile.name, job.model.id);
  if (!mapping) throw new UpstreamError('rejected', `${profile.name}: the model ${job.model.id} cannot be sent`);
  const input = job.portableInput ?? job.input;
  const rest = Object.fromEntries(Object.entries(input).filter(([field]) => !named.includes(field)));
  const mapped = mapInput(mapping, rest);
  if (!mapped.ok)
    throw new UpstreamError('rejected', `${profile.name}: the input cannot be sent`, {
      reason: `The provider does not take ${mapped.field} ${JSON.stringify(mapped.value)}.`,
    });
  const bounds = profile.submit.deadlineSeconds;
  const left = job.deadlineAt !== undefined ? Math.max(0, Math.floor((job.deadlineAt - now) / 1000)) : undefined;
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
function jobNames(ref: ProfileHandle, job: DeploymentJob, extra: Record<string, unknown> = {}): Names {
  return (name) => {
    if (Object.hasOwn(extra, name)) return extra[name];
    if (Object.hasOwn(ref.ids, name)) return ref.ids[name];
    if (name === 'submitPath') return ref.submitPath;
    if (name === 'taskId') return job.taskId;
    if (name === 'upstreamModel') return job.upstreamModel ?? job.model.id;
    return undefined;
  };
}
