import { isUnquotedPlaceholder, JSON_PATH, placeholdersIn } from './profile-paths.js';
import type { JsonSchema } from './types.js';

/**
 * A provider profile (spec/providers/<name>.yaml with a `submit` section): the whole protocol of
 * an upstream as data, executed by one runtime adapter (runtime/upstreams/profile-upstream.ts).
 * The vocabulary is documented in spec/providers/README.md; this file checks it.
 */

export const PROFILE_STATES = ['queued', 'running', 'succeeded', 'failed', 'canceled'] as const;
export type ProfileState = (typeof PROFILE_STATES)[number];
const METHODS = ['GET', 'POST', 'PUT', 'DELETE'] as const;
type Method = (typeof METHODS)[number];
const MODES = ['text-to-video', 'image-to-video', 'reference-to-video', 'video-extend', 'video-edit'];
/**
 * Classes a 2xx answer's business error may have: the failure classes of
 * runtime/deployments/upstream-error.ts but `unreachable` and `ambiguous` (an answer came).
 * test/generator/profiles.test.ts keeps the two lists together.
 */
export const BODY_ERROR_CLASSES = [
  'busy',
  'server',
  'unauthorized',
  'rejected',
  'lost',
  'protocol',
  'configuration',
] as const;

/**
 * The class of a business code `errors.classes` does not name (spec/providers/README.md): the
 * request is refused (on a submit the task fails with the provider's reason; on a poll the job
 * ended failed), and nothing counts against the deployment.
 */
export const UNKNOWN_CODE_CLASS = 'rejected';
/**
 * Classes that count against a deployment (fail over, cool it down): an unknown code may not take
 * one, since one account's unrecognised answer would then cool a deployment serving everyone.
 */
const DEPLOYMENT_EVIDENCE_CLASSES = ['busy', 'server', 'unauthorized', 'configuration'] as const;

/** A state value, or a condition on another member of the status answer (`when` present / equal). */
export type ProfileStateRule =
  | ProfileState
  | { when: string; equals?: string | number | boolean; is: ProfileState; otherwise: ProfileState };

export interface ProfileRequest {
  method: Method;
  /** One path, or one per catalogue mode (a mode not named: the profile does not serve its models). */
  path: string | Record<string, string>;
}

export interface ProviderProfile {
  auth: { scheme: 'bearer' | 'key' | 'header' | 'jwt-hs256' | 'none'; header?: string };
  headers: Record<string, string>;
  submit: ProfileRequest & {
    body?: unknown;
    /** `body` is a map of catalogue mode to that mode's body (every key of it a mode). */
    bodyByMode?: true;
    handle: Record<string, string>;
    /** After a submit of unknown outcome (or refused as a duplicate): find the job by what the submit sent. */
    lookup?: { method: Method; path: string; handle: Record<string, string> };
    /** Bounds of {deadlineSeconds}: the seconds left to the task's deadline, clamped to what the provider accepts. */
    deadlineSeconds?: { min: number; max: number };
  };
  poll: {
    method: Method;
    path: string;
    state: string;
    states: Record<string, ProfileStateRule>;
    reason?: string;
    progress?: string;
    /** What 100 % is in the provider's progress (1 for a fraction). */
    progressMax: number;
    capture: Record<string, string>;
  };
  result: {
    urls: string;
    /** A second request that turns the poll's captures into the media link: `urls` is then read from its answer. */
    follow?: { method: Method; path: string };
  };
  cancel?: { method: Method; path: string };
  probe?: { method: Method; path: string; ok: number[] };
  /** How a job is found without its handle after a submit whose outcome is unknown (issue 37): one of the two forms. */
  find?: ProfileFind;
  errors?: {
    code: string;
    ok: (string | number | boolean)[];
    reason?: string;
    classes: Record<string, string>;
    otherwise: string;
  };
}

/**
 * Finding a job without its handle (spec/providers/README.md, "Finding a job"): `list`, a call
 * listing the key's jobs, each item matched by its creation time and by members that echo what
 * the submit sent (the request's fingerprint); `byId`, a call reading the job by an id the submit
 * chose and wrote into the request ({taskId}).
 */
export type ProfileFind =
  | {
      list: {
        method: Method;
        path: string;
        /** JSON path of the items (generations[*]). */
        items: string;
        /** Per item: the job's ids, the names `submit.handle` captures. */
        handle: Record<string, string>;
        /** Per item: when the job was created (ISO 8601 text, or Unix seconds or milliseconds). */
        createdAt: string;
        /** Per item: JSON path -> the value the submit sent there (a template: "{input.prompt}"). */
        match: Record<string, string>;
        /** JSON path of "the list goes on" in the answer (has_more); absent: only a page reaching past the window is whole. */
        more?: string;
      };
    }
  | { byId: { method: Method; path: string; handle: Record<string, string>; absent: number[] } };

type Problem = (path: (string | number)[], message: string) => void;

const isMap = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const PROFILE_KEYS = ['auth', 'headers', 'submit', 'poll', 'result', 'cancel', 'probe', 'find', 'errors'];
const JOB_NAMES = ['upstreamModel', 'taskId', 'upstreamCallbackUrl', 'deadlineSeconds'];

/** Unknown keys of one section, each at its place. */
function onlyKeys(raw: Record<string, unknown>, allowed: string[], at: (string | number)[], problem: Problem) {
  for (const key of Object.keys(raw))
    if (!allowed.includes(key)) problem([...at, key], `unknown key "${key}" (${allowed.join(', ')})`);
}

function jsonPath(raw: unknown, at: (string | number)[], problem: Problem, required = true): string | undefined {
  if (raw === undefined) {
    if (required) problem(at, 'a JSON path is required here (render.files[*].href)');
    return undefined;
  }
  if (typeof raw !== 'string' || !JSON_PATH.test(raw)) {
    problem(
      at,
      `malformed JSON path ${JSON.stringify(raw)}: names joined by dots, each with [n] or [*] (render.files[*].href)`,
    );
    return undefined;
  }
  return raw;
}

function pathMap(raw: unknown, at: (string | number)[], problem: Problem): Record<string, string> {
  if (!isMap(raw) || Object.keys(raw).length === 0) {
    problem(at, 'must be a map of names to JSON paths');
    return {};
  }
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || JOB_NAMES.includes(name) || name === 'input' || name === 'submitPath')
      problem(
        [...at, name],
        `"${name}" cannot be a captured name (letters, digits and _, not a placeholder of the job)`,
      );
    const path = jsonPath(value, [...at, name], problem);
    if (path) out[name] = path;
  }
  return out;
}

/**
 * Every string in a template, with its place; an unquoted placeholder (a one-key map of null) is a
 * problem with the hint to quote it.
 */
function strings(
  value: unknown,
  at: (string | number)[],
  problem: Problem,
  visit: (text: string, at: (string | number)[]) => void,
): void {
  if (isUnquotedPlaceholder(value)) {
    const name = Object.keys(value)[0];
    problem(at, `{${name}} is read by YAML as a map with a null value: quote it ("{${name}}")`);
    return;
  }
  if (typeof value === 'string') visit(value, at);
  else if (Array.isArray(value)) for (const [i, item] of value.entries()) strings(item, [...at, i], problem, visit);
  else if (isMap(value)) for (const [k, v] of Object.entries(value)) strings(v, [...at, k], problem, visit);
}

/** Checks the placeholders of a template against the names known there. */
function placeholders(
  value: unknown,
  at: (string | number)[],
  problem: Problem,
  known: (name: string) => boolean,
  where: string,
): void {
  strings(value, at, problem, (text, here) => {
    for (const name of placeholdersIn(text))
      if (!known(name)) problem(here, `placeholder {${name}} names nothing ${where}`);
  });
}

function method(raw: unknown, fallback: Method, at: (string | number)[], problem: Problem): Method {
  if (raw === undefined) return fallback;
  if (!(METHODS as readonly unknown[]).includes(raw)) problem(at, `method must be one of ${METHODS.join(', ')}`);
  return (METHODS as readonly unknown[]).includes(raw) ? (raw as Method) : fallback;
}

function requestPath(raw: unknown, at: (string | number)[], problem: Problem): string | undefined {
  if (isUnquotedPlaceholder(raw)) return void strings(raw, at, problem, () => {});
  if (typeof raw !== 'string' || !(raw.startsWith('/') || raw.startsWith('{submitPath}'))) {
    problem(at, "path must be a path under the upstream's baseUrl, starting with / (or with {submitPath})");
    return undefined;
  }
  return raw;
}

/** The body template's pieces beyond plain JSON: `{ each: "{input.list}", item: {...} }` builds one item per element. */
function checkEach(value: unknown, at: (string | number)[], problem: Problem, known: (n: string) => boolean): void {
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) checkEach(item, [...at, i], problem, known);
    return;
  }
  if (!isMap(value)) return;
  if ('each' in value) {
    onlyKeys(value, ['each', 'item'], at, problem);
    const source = typeof value.each === 'string' ? placeholdersIn(value.each) : [];
    if (source.length !== 1 || value.each !== `{${source[0]}}`)
      problem([...at, 'each'], 'each must be one placeholder of a list ("{input.reference_image_urls}")');
    if (value.item === undefined) problem(at, 'each needs an item template (its element is {item})');
    return;
  }
  for (const [k, v] of Object.entries(value)) checkEach(v, [...at, k], problem, known);
}

/**
 * Checks the profile sections of a mapping file that has `submit`. `fieldNames` are the
 * catalogue's fields ({input.<field>}); every problem goes to `problem` at its place.
 */
export function checkProfile(
  data: Record<string, unknown>,
  dictionary: Record<string, JsonSchema>,
  problem: Problem,
): ProviderProfile | undefined {
  // auth
  const auth = data.auth ?? 'none';
  let scheme: ProviderProfile['auth'] = { scheme: 'none' };
  if (typeof auth === 'string' && ['bearer', 'key', 'jwt-hs256', 'none'].includes(auth))
    scheme = { scheme: auth as ProviderProfile['auth']['scheme'] };
  else if (typeof auth === 'string' && /^header:[A-Za-z0-9-]+$/.test(auth))
    scheme = { scheme: 'header', header: auth.slice('header:'.length) };
  else problem(['auth'], 'auth must be bearer, key, header:<Header-Name>, jwt-hs256 or none');

  const headers: Record<string, string> = {};
  if (data.headers !== undefined) {
    if (!isMap(data.headers)) problem(['headers'], 'headers must be a map of header names to text');
    else
      for (const [name, value] of Object.entries(data.headers)) {
        if (!/^[A-Za-z0-9-]+$/.test(name)) problem(['headers', name], `"${name}" is not a header name`);
        if (typeof value !== 'string' && typeof value !== 'number')
          problem(['headers', name], 'a static header is text (quote it)');
        else headers[name] = String(value);
      }
  }

  // submit
  const submitRaw = data.submit;
  if (!isMap(submitRaw)) {
    problem(['submit'], 'submit must be a map (method, path, body, handle)');
    return undefined;
  }
  onlyKeys(submitRaw, ['method', 'path', 'body', 'handle', 'lookup', 'deadlineSeconds'], ['submit'], problem);
  const fieldKnown = (name: string) =>
    JOB_NAMES.includes(name) || name === 'input' || (name.startsWith('input.') && name.slice(6) in dictionary);
  let submitPath: ProfileRequest['path'] | undefined;
  if (isMap(submitRaw.path) && !isUnquotedPlaceholder(submitRaw.path)) {
    submitPath = {};
    for (const [mode, p] of Object.entries(submitRaw.path)) {
      if (!MODES.includes(mode))
        problem(['submit', 'path', mode], `"${mode}" is not a catalogue mode (${MODES.join(', ')})`);
      const path = requestPath(p, ['submit', 'path', mode], problem);
      if (path) submitPath[mode] = path;
    }
  } else submitPath = requestPath(submitRaw.path, ['submit', 'path'], problem);
  placeholders(submitRaw.path, ['submit', 'path'], problem, fieldKnown, 'in a submit');
  placeholders(submitRaw.body, ['submit', 'body'], problem, (n) => fieldKnown(n) || n === 'item', 'in a submit');
  checkEach(submitRaw.body, ['submit', 'body'], problem, fieldKnown);
  const bodyByMode =
    isMap(submitRaw.body) &&
    Object.keys(submitRaw.body).length > 0 &&
    Object.keys(submitRaw.body).every((key) => MODES.includes(key));
  if (bodyByMode)
    for (const mode of Object.keys(submitRaw.body as Record<string, unknown>))
      if (submitPath !== undefined && typeof submitPath !== 'string' && !(mode in submitPath))
        problem(['submit', 'body', mode], `the submit has no path for mode ${mode}`);
  if (submitRaw.handle === undefined) problem(['submit'], 'submit needs a handle (id: <JSON path of the job id>)');
  const handle = submitRaw.handle === undefined ? {} : pathMap(submitRaw.handle, ['submit', 'handle'], problem);
  const handleKnown = (name: string) =>
    name in handle || name === 'submitPath' || name === 'taskId' || name === 'upstreamModel';
  let lookup: ProviderProfile['submit']['lookup'];
  if (submitRaw.lookup !== undefined) {
    const raw = submitRaw.lookup;
    if (!isMap(raw)) problem(['submit', 'lookup'], 'lookup must be a map (method, path, handle)');
    else {
      onlyKeys(raw, ['method', 'path', 'handle'], ['submit', 'lookup'], problem);
      const path = requestPath(raw.path, ['submit', 'lookup', 'path'], problem);
      placeholders(
        raw.path,
        ['submit', 'lookup', 'path'],
        problem,
        (n) => ['taskId', 'upstreamModel', 'submitPath'].includes(n),
        'in a lookup (it knows {taskId}, {upstreamModel}, {submitPath})',
      );
      const own = raw.handle === undefined ? handle : pathMap(raw.handle, ['submit', 'lookup', 'handle'], problem);
      for (const name of Object.keys(handle))
        if (!(name in own)) problem(['submit', 'lookup', 'handle'], `the lookup's handle must capture ${name} too`);
      if (path)
        lookup = { method: method(raw.method, 'GET', ['submit', 'lookup', 'method'], problem), path, handle: own };
    }
  }
  let deadlineSeconds: ProviderProfile['submit']['deadlineSeconds'];
  if (submitRaw.deadlineSeconds !== undefined) {
    const raw = submitRaw.deadlineSeconds;
    if (
      !isMap(raw) ||
      !Number.isSafeInteger(raw.min) ||
      !Number.isSafeInteger(raw.max) ||
      (raw.min as number) < 0 ||
      (raw.min as number) > (raw.max as number)
    )
      problem(['submit', 'deadlineSeconds'], 'deadlineSeconds must be { min, max }: whole seconds, min <= max');
    else deadlineSeconds = { min: raw.min as number, max: raw.max as number };
  }

  // poll
  const pollRaw = data.poll;
  if (!isMap(pollRaw)) {
    problem(['poll'], 'poll must be a map (method, path, state, states, ...)');
    return undefined;
  }
  onlyKeys(
    pollRaw,
    ['method', 'path', 'state', 'states', 'reason', 'progress', 'progressMax', 'capture'],
    ['poll'],
    problem,
  );
  const pollPath = requestPath(pollRaw.path, ['poll', 'path'], problem);
  placeholders(
    pollRaw.path,
    ['poll', 'path'],
    problem,
    handleKnown,
    'in a poll (it knows the handle, {submitPath}, {taskId})',
  );
  const state = jsonPath(pollRaw.state, ['poll', 'state'], problem);
  const states: Record<string, ProfileStateRule> = {};
  const isState = (v: unknown): v is ProfileState => (PROFILE_STATES as readonly unknown[]).includes(v);
  const badState = (at: (string | number)[], v: unknown) =>
    problem(at, `${JSON.stringify(v)} is not a state (${PROFILE_STATES.join(', ')})`);
  if (!isMap(pollRaw.states) || Object.keys(pollRaw.states).length === 0)
    problem(
      ['poll', 'states'],
      "states must map each of the provider's status values to queued, running, succeeded, failed or canceled",
    );
  else
    for (const [value, to] of Object.entries(pollRaw.states)) {
      const at = ['poll', 'states', value];
      if (isState(to)) states[value] = to;
      else if (isMap(to) && !isUnquotedPlaceholder(to)) {
        onlyKeys(to, ['when', 'equals', 'is', 'otherwise'], at, problem);
        const when = jsonPath(to.when, [...at, 'when'], problem);
        if (!isState(to.is)) badState([...at, 'is'], to.is);
        if (!isState(to.otherwise)) badState([...at, 'otherwise'], to.otherwise);
        if (to.equals !== undefined && !['string', 'number', 'boolean'].includes(typeof to.equals))
          problem([...at, 'equals'], 'equals is a string, a number or a boolean');
        if (when && isState(to.is) && isState(to.otherwise))
          states[value] = {
            when,
            ...(to.equals !== undefined ? { equals: to.equals as string | number | boolean } : {}),
            is: to.is,
            otherwise: to.otherwise,
          };
      } else badState(at, to);
    }
  const capture = pollRaw.capture === undefined ? {} : pathMap(pollRaw.capture, ['poll', 'capture'], problem);
  const progressMax = pollRaw.progressMax ?? 100;
  if (progressMax !== 1 && progressMax !== 100) problem(['poll', 'progressMax'], 'progressMax must be 1 or 100');
  const reason = jsonPath(pollRaw.reason, ['poll', 'reason'], problem, false);
  const progress = jsonPath(pollRaw.progress, ['poll', 'progress'], problem, false);

  // result
  const succeeds = Object.values(states).some(
    (r) => r === 'succeeded' || (typeof r === 'object' && (r.is === 'succeeded' || r.otherwise === 'succeeded')),
  );
  let result: ProviderProfile['result'] | undefined;
  const resultRaw = data.result;
  if (resultRaw === undefined) {
    if (succeeds)
      problem(
        ['poll', 'states'],
        'a state maps to succeeded, but the profile has no result (result: { urls: <JSON path> })',
      );
  } else if (typeof resultRaw === 'string') {
    const urls = jsonPath(resultRaw, ['result'], problem);
    if (urls) result = { urls };
  } else if (!isMap(resultRaw)) problem(['result'], 'result must be a JSON path or a map (urls, follow)');
  else {
    onlyKeys(resultRaw, ['urls', 'follow'], ['result'], problem);
    const urls = jsonPath(resultRaw.urls, ['result', 'urls'], problem);
    let follow: NonNullable<ProviderProfile['result']['follow']> | undefined;
    if (resultRaw.follow !== undefined) {
      const raw = resultRaw.follow;
      if (!isMap(raw)) problem(['result', 'follow'], 'follow must be a map (method, path)');
      else {
        onlyKeys(raw, ['method', 'path'], ['result', 'follow'], problem);
        const path = requestPath(raw.path, ['result', 'follow', 'path'], problem);
        placeholders(
          raw.path,
          ['result', 'follow', 'path'],
          problem,
          (n) => handleKnown(n) || n in capture,
          "in a follow-up (it knows the handle and the poll's capture)",
        );
        if (path) follow = { method: method(raw.method, 'GET', ['result', 'follow', 'method'], problem), path };
      }
    }
    if (urls) result = { urls, ...(follow ? { follow } : {}) };
  }

  const simple = (
    key: 'cancel' | 'probe',
  ): { method: Method; path: string; raw: Record<string, unknown> } | undefined => {
    const raw = data[key];
    if (raw === undefined) return undefined;
    if (!isMap(raw) || isUnquotedPlaceholder(raw)) {
      problem([key], `${key} must be a map (method, path${key === 'probe' ? ', ok' : ''})`);
      return undefined;
    }
    onlyKeys(raw, key === 'probe' ? ['method', 'path', 'ok'] : ['method', 'path'], [key], problem);
    const path = requestPath(raw.path, [key, 'path'], problem);
    placeholders(
      raw.path,
      [key, 'path'],
      problem,
      key === 'cancel' ? handleKnown : () => false,
      key === 'cancel'
        ? 'in a cancel (it knows the handle, {submitPath}, {taskId})'
        : 'in a probe (it creates nothing and knows no job)',
    );
    return path
      ? { method: method(raw.method, key === 'probe' ? 'GET' : 'POST', [key, 'method'], problem), path, raw }
      : undefined;
  };
  const cancel = simple('cancel');
  const probeRaw = simple('probe');
  let probe: ProviderProfile['probe'];
  if (probeRaw) {
    const ok = probeRaw.raw.ok ?? [200];
    if (!Array.isArray(ok) || ok.length === 0 || !ok.every((s) => Number.isSafeInteger(s) && s >= 100 && s <= 599))
      problem(['probe', 'ok'], 'ok must be a list of HTTP statuses that mean reachable, key accepted ([200], [404])');
    else probe = { method: probeRaw.method, path: probeRaw.path, ok: ok as number[] };
  }

  const find = checkFind(data.find, submitRaw, handle, !!lookup, fieldKnown, problem);

  let errors: ProviderProfile['errors'];
  if (data.errors !== undefined) {
    const raw = data.errors;
    if (!isMap(raw)) problem(['errors'], 'errors must be a map (code, ok, reason, classes, otherwise)');
    else {
      onlyKeys(raw, ['code', 'ok', 'reason', 'classes', 'otherwise'], ['errors'], problem);
      const code = jsonPath(raw.code, ['errors', 'code'], problem);
      const ok = raw.ok;
      if (!Array.isArray(ok) || ok.length === 0 || !ok.every((v) => ['string', 'number', 'boolean'].includes(typeof v)))
        problem(['errors', 'ok'], 'ok must list the code values that mean success ([0])');
      const errorReason = jsonPath(raw.reason, ['errors', 'reason'], problem, false);
      const classes: Record<string, string> = {};
      const isClass = (v: unknown) => (BODY_ERROR_CLASSES as readonly unknown[]).includes(v);
      if (raw.classes !== undefined && !isMap(raw.classes))
        problem(['errors', 'classes'], 'classes must map code values to failure classes');
      for (const [value, cls] of Object.entries(isMap(raw.classes) ? raw.classes : {})) {
        if (!isClass(cls))
          problem(
            ['errors', 'classes', value],
            `${JSON.stringify(cls)} is not a failure class (${BODY_ERROR_CLASSES.join(', ')})`,
          );
        else classes[value] = cls as string;
      }
      const otherwise = raw.otherwise ?? UNKNOWN_CODE_CLASS;
      if (!isClass(otherwise))
        problem(
          ['errors', 'otherwise'],
          `${JSON.stringify(otherwise)} is not a failure class (${BODY_ERROR_CLASSES.join(', ')})`,
        );
      else if ((DEPLOYMENT_EVIDENCE_CLASSES as readonly unknown[]).includes(otherwise))
        problem(
          ['errors', 'otherwise'],
          `an unknown code cannot be ${otherwise}: one account's answer the profile does not know is no evidence against the deployment (name the code in classes, or leave otherwise to ${UNKNOWN_CODE_CLASS})`,
        );
      if (code && Array.isArray(ok))
        errors = {
          code,
          ok: ok as (string | number | boolean)[],
          ...(errorReason ? { reason: errorReason } : {}),
          classes,
          otherwise: otherwise as string,
        };
    }
  }

  if (!submitPath || !pollPath || !state) return undefined;
  return {
    auth: scheme,
    headers,
    submit: {
      method: method(submitRaw.method, 'POST', ['submit', 'method'], problem),
      path: submitPath,
      ...(submitRaw.body !== undefined ? { body: submitRaw.body } : {}),
      ...(bodyByMode ? { bodyByMode: true as const } : {}),
      handle,
      ...(lookup ? { lookup } : {}),
      ...(deadlineSeconds ? { deadlineSeconds } : {}),
    },
    poll: {
      method: method(pollRaw.method, 'GET', ['poll', 'method'], problem),
      path: pollPath,
      state,
      states,
      ...(reason ? { reason } : {}),
      ...(progress ? { progress } : {}),
      progressMax: progressMax as number,
      capture,
    },
    result: result ?? { urls: '' },
    ...(cancel ? { cancel: { method: cancel.method, path: cancel.path } } : {}),
    ...(probe ? { probe } : {}),
    ...(find ? { find } : {}),
    ...(errors ? { errors } : {}),
  };
}

/** Whether a template (the submit's body or path) writes {taskId} somewhere. */
function writesTaskId(value: unknown): boolean {
  let found = false;
  strings(
    value,
    [],
    () => {},
    (text) => {
      if (placeholdersIn(text).includes('taskId')) found = true;
    },
  );
  return found;
}

/** The `find` section: exactly one of `list` and `byId`, each with the fields it needs to name a job. */
function checkFind(
  raw: unknown,
  submitRaw: Record<string, unknown>,
  handle: Record<string, string>,
  hasLookup: boolean,
  fieldKnown: (name: string) => boolean,
  problem: Problem,
): ProfileFind | undefined {
  if (raw === undefined) return undefined;
  if (!isMap(raw) || isUnquotedPlaceholder(raw) || Object.keys(raw).length !== 1) {
    problem(['find'], 'find must be a map with one of list (a call listing the jobs) or byId (an id the submit chose)');
    if (!isMap(raw)) return undefined;
  }
  onlyKeys(raw, ['list', 'byId'], ['find'], problem);
  if (hasLookup)
    problem(
      ['find'],
      'submit.lookup already finds the job a submit made (the submit is then idempotent): find is for a protocol without one',
    );
  const sameNames = (own: Record<string, string>, at: (string | number)[]) => {
    for (const name of Object.keys(handle))
      if (!(name in own)) problem(at, `find's handle must capture ${name}, as submit.handle does`);
  };
  if (raw.list !== undefined) {
    const list = raw.list;
    const at = ['find', 'list'];
    if (!isMap(list) || isUnquotedPlaceholder(list)) {
      problem(at, 'list must be a map (method, path, items, handle, createdAt, match, more)');
      return undefined;
    }
    onlyKeys(list, ['method', 'path', 'items', 'handle', 'createdAt', 'match', 'more'], at, problem);
    const path = requestPath(list.path, [...at, 'path'], problem);
    placeholders(
      list.path,
      [...at, 'path'],
      problem,
      (n) => n === 'upstreamModel',
      'in a list (it knows {upstreamModel})',
    );
    const items = jsonPath(list.items, [...at, 'items'], problem);
    if (items && !items.includes('[*]'))
      problem([...at, 'items'], 'items must reach every item of the list, with [*] (generations[*])');
    if (list.handle === undefined) problem(at, "list needs a handle: the JSON path of each item's job id (id: id)");
    const own = list.handle === undefined ? {} : pathMap(list.handle, [...at, 'handle'], problem);
    if (list.handle !== undefined) sameNames(own, [...at, 'handle']);
    const createdAt = jsonPath(list.createdAt, [...at, 'createdAt'], problem);
    const more = jsonPath(list.more, [...at, 'more'], problem, false);
    const match: Record<string, string> = {};
    if (!isMap(list.match) || isUnquotedPlaceholder(list.match) || Object.keys(list.match).length === 0)
      problem(
        [...at, 'match'],
        'match must map JSON paths of an item to what the submit sent there ({ request.prompt: "{input.prompt}" }): the creation time alone cannot tell our job from another',
      );
    else
      for (const [member, value] of Object.entries(list.match)) {
        const here = [...at, 'match', member];
        const memberPath = jsonPath(member, here, problem);
        if (typeof value !== 'string' || placeholdersIn(value).length === 0) {
          if (!isUnquotedPlaceholder(value))
            problem(
              here,
              'a match value is a placeholder of what the submit sent ("{input.prompt}", "{upstreamModel}")',
            );
          else strings(value, here, problem, () => {});
          continue;
        }
        placeholders(
          value,
          here,
          problem,
          (n) => fieldKnown(n) && n !== 'input',
          "in a match (it knows the submit's names but {input})",
        );
        if (memberPath) match[memberPath] = value;
      }
    if (!path || !items || !createdAt || Object.keys(match).length === 0 || list.handle === undefined) return undefined;
    return {
      list: {
        method: method(list.method, 'GET', [...at, 'method'], problem),
        path,
        items,
        handle: own,
        createdAt,
        match,
        ...(more ? { more } : {}),
      },
    };
  }
  if (raw.byId !== undefined) {
    const byId = raw.byId;
    const at = ['find', 'byId'];
    if (!isMap(byId) || isUnquotedPlaceholder(byId)) {
      problem(at, 'byId must be a map (method, path, handle, absent)');
      return undefined;
    }
    onlyKeys(byId, ['method', 'path', 'handle', 'absent'], at, problem);
    const path = requestPath(byId.path, [...at, 'path'], problem);
    placeholders(
      byId.path,
      [...at, 'path'],
      problem,
      (n) => n === 'taskId' || n === 'upstreamModel',
      'in a byId (it knows {taskId}, {upstreamModel})',
    );
    if (typeof byId.path === 'string' && !placeholdersIn(byId.path).includes('taskId'))
      problem([...at, 'path'], 'a byId path must name {taskId}: the id the submit chose is how the job is read');
    if (!writesTaskId(submitRaw.body) && !writesTaskId(submitRaw.path))
      problem(
        ['submit'],
        'find.byId reads the job by the id the submit chose, but the submit writes no {taskId} into the request',
      );
    const own = byId.handle === undefined ? handle : pathMap(byId.handle, [...at, 'handle'], problem);
    sameNames(own, [...at, 'handle']);
    const absent = byId.absent ?? [404];
    const statuses =
      Array.isArray(absent) &&
      absent.length > 0 &&
      absent.every((s) => Number.isSafeInteger(s) && s >= 200 && s <= 599);
    if (!statuses) problem([...at, 'absent'], 'absent must list the HTTP statuses that mean no such job ([404])');
    if (!path || !statuses) return undefined;
    return {
      byId: {
        method: method(byId.method, 'GET', [...at, 'method'], problem),
        path,
        handle: own,
        absent: absent as number[],
      },
    };
  }
  return undefined;
}
