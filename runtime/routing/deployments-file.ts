import { readFileSync } from 'node:fs';
import { isMap, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import { catalogue } from '../../generated/catalogue.js';
import { hasProviderMapping, notServedBy, notServedText } from '../../generated/provider-mappings.js';
import type { Environment } from '../config.js';
import { adapterOf } from './build.js';
import { PROFILE_NAMES, providerProfile } from '../../generated/provider-profiles.js';
import { REPLICATE_MODEL } from '../upstreams/replicate.js';
import { DEFAULT_COOLDOWN, type Cooldown, type UpstreamCost } from './router.js';

/** The coded kinds of upstream a deployments file may name; `simulator` keeps simulating a model. */
export const UPSTREAM_KINDS = ['simulator', 'openai-videos', 'jobs', 'fal-queue', 'replicate'] as const;
/** A coded kind, or the name of a provider profile (spec/providers/<name>.yaml with `submit`). */
export type UpstreamKind = string;

/** Every kind a deployments file may name: the coded ones and the profiles. */
export function upstreamKinds(): string[] {
  return [...UPSTREAM_KINDS, ...PROFILE_NAMES];
}

/** One upstream of the file, checked; `apiKey` read from the variable `secretEnv` names. */
export interface UpstreamSpec {
  name: string;
  kind: UpstreamKind;
  baseUrl?: string;
  secretEnv?: string;
  apiKey?: string;
  maxInFlight?: number;
  /** The most of maxInFlight one account may hold (default: half of it, rounded up). */
  maxInFlightPerAccount?: number;
  callbacks: boolean;
  cost?: UpstreamCost;
  /** How long a submit waits for its answer before its outcome is unknown (default: the request timeout, 20 s). */
  submitTimeoutSeconds?: number;
  /** How external references reach it (default: what its protocol's spec/providers file says, else `stored`). */
  references?: 'stored' | 'original';
}

/** The longest submitTimeoutSeconds: a worker slot waits that long on one submit. */
export const MAX_SUBMIT_TIMEOUT_SECONDS = 600;

export interface RouteSpec {
  upstream: string;
  upstreamModel: string;
  priority: number;
  weight: number;
  cost?: UpstreamCost;
}

export interface DeploymentsPlan {
  file: string;
  /** The file as read: what the service records as the plan it serves (it holds variable names, never a key). */
  text: string;
  upstreams: Map<string, UpstreamSpec>;
  /** Model id -> its routes, in the file's order. */
  routes: Map<string, RouteSpec[]>;
  cooldown: Cooldown;
}

export class DeploymentsFileError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'DeploymentsFileError';
  }
}

const TOP_KEYS = ['upstreams', 'models', 'cooldown'];
const UPSTREAM_KEYS = [
  'kind',
  'baseUrl',
  'secretEnv',
  'maxInFlight',
  'maxInFlightPerAccount',
  'callbacks',
  'cost',
  'submitTimeoutSeconds',
  'references',
];
const ROUTE_KEYS = ['upstream', 'upstreamModel', 'priority', 'weight', 'cost'];
const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** A USD amount with at most six decimals (millionths, the unit costs are kept in). */
const USD = /^(0|[1-9]\d{0,8})(?:\.(\d{1,6}))?$/;

type Path = (string | number)[];

/** Offset of the deepest node along `path` (the key for map entries, so messages point at the name). */
function offsetOf(doc: Document, path: Path): number {
  let node: unknown = doc.contents;
  let offset = (node as { range?: number[] } | null)?.range?.[0] ?? 0;
  for (const segment of path) {
    if (isMap(node)) {
      const pair = node.items.find(
        (item) => String((item.key as { value?: unknown })?.value ?? item.key) === String(segment),
      );
      if (!pair) break;
      offset = (pair.key as { range?: number[] })?.range?.[0] ?? offset;
      node = pair.value;
    } else if (isSeq(node)) {
      const item = node.items[Number(segment)] as { range?: number[] } | undefined;
      if (!item) break;
      offset = item.range?.[0] ?? offset;
      node = item;
    } else break;
  }
  return offset;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** "0.05" USD -> 50000 millionths, by string arithmetic (no floating point). */
export function usdToMicros(text: string): number | undefined {
  const match = USD.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * 1_000_000 + Number((match[2] ?? '').padEnd(6, '0'));
}

/**
 * Reads and checks the operator's deployments file: every problem as `file:line:col: what is wrong`
 * (an unknown model id, an unknown upstream, a missing secret variable named, a bad kind, ...),
 * all of them at once. Secrets are never in the file: `secretEnv` names the variable the key is
 * read from, here, at start, in `env` (the service's `Config.environment`).
 */
export function loadDeploymentsFile(file: string, env: Environment, options: ParseOptions = {}): DeploymentsPlan {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new DeploymentsFileError([
      `${file}:1:1: cannot read the file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    ]);
  }
  return parseDeployments(file, text, env, options);
}

export interface ParseOptions {
  /**
   * For a reader that sends nothing upstream (`deployments status`): the variables `secretEnv`
   * names are not read nor required, and what depends on this process's environment
   * (MEDIAFORGE_PUBLIC_URL for callbacks) is not checked. No `apiKey` is set.
   */
  withoutSecrets?: boolean;
}

export function parseDeployments(
  file: string,
  text: string,
  env: Environment = {},
  options: ParseOptions = {},
): DeploymentsPlan {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true });
  const problems: string[] = [];
  const at = (offset: number, message: string) => {
    const { line, col } = lineCounter.linePos(offset);
    problems.push(`${file}:${line}:${col}: ${message}`);
  };
  for (const error of doc.errors) at(error.pos[0], error.message.split('\n')[0]);
  if (problems.length) throw new DeploymentsFileError(problems);
  const problem = (path: Path, message: string) => at(offsetOf(doc, path), message);
  const data = doc.toJS() as unknown;
  if (!isObject(data))
    throw new DeploymentsFileError([`${file}:1:1: the file must be a map with upstreams and models`]);
  for (const key of Object.keys(data))
    if (!TOP_KEYS.includes(key)) problem([key], `unknown key "${key}" (${TOP_KEYS.join(', ')})`);

  const upstreams = new Map<string, UpstreamSpec>();
  if (!isObject(data.upstreams)) problem(['upstreams'], 'upstreams must be a map of names to upstreams');
  for (const [name, raw] of Object.entries(isObject(data.upstreams) ? data.upstreams : {})) {
    const here: Path = ['upstreams', name];
    if (!NAME.test(name)) problem(here, `upstream name "${name}" must be letters, digits, - and _ (at most 63)`);
    if (!isObject(raw)) {
      problem(here, `an upstream is a map (${UPSTREAM_KEYS.join(', ')})`);
      continue;
    }
    for (const key of Object.keys(raw))
      if (!UPSTREAM_KEYS.includes(key)) problem([...here, key], `unknown key "${key}" (${UPSTREAM_KEYS.join(', ')})`);
    const kind = raw.kind as UpstreamKind;
    if (!upstreamKinds().includes(kind)) {
      problem([...here, 'kind'], `kind must be one of ${upstreamKinds().join(', ')}`);
      continue;
    }
    if (kind !== 'simulator' && !adapterOf(kind))
      problem([...here, 'kind'], `kind ${kind} has no adapter in this version`);
    else if (kind !== 'simulator' && !hasProviderMapping(kind))
      problem([...here, 'kind'], `kind ${kind} has no field mapping (spec/providers/${kind}.yaml)`);
    const spec: UpstreamSpec = { name, kind, callbacks: false };
    if (kind === 'simulator') {
      for (const key of ['baseUrl', 'secretEnv', 'callbacks', 'submitTimeoutSeconds', 'references'] as const)
        if (raw[key] !== undefined) problem([...here, key], `an upstream of kind simulator takes no ${key}`);
    } else {
      const url = typeof raw.baseUrl === 'string' ? safeUrl(raw.baseUrl) : undefined;
      if (raw.baseUrl === undefined) problem(here, `upstream ${name} needs a baseUrl`);
      else if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:'))
        problem([...here, 'baseUrl'], 'baseUrl must be an http(s) URL');
      else if (url.username || url.password)
        problem(
          [...here, 'baseUrl'],
          'baseUrl must not carry credentials: name the variable holding the key in secretEnv',
        );
      else if (url.search || url.hash) problem([...here, 'baseUrl'], 'baseUrl must not have a query or a fragment');
      else spec.baseUrl = url.href.replace(/\/+$/, '');
      if (raw.secretEnv !== undefined) {
        if (typeof raw.secretEnv !== 'string' || !ENV_NAME.test(raw.secretEnv))
          problem([...here, 'secretEnv'], 'secretEnv must be the name of an environment variable');
        else if (options.withoutSecrets) spec.secretEnv = raw.secretEnv;
        else if (!env[raw.secretEnv])
          problem(
            [...here, 'secretEnv'],
            `the environment variable ${raw.secretEnv} (the key of upstream ${name}) is not set`,
          );
        else if (providerProfile(kind)?.auth.scheme === 'jwt-hs256' && !/^[^:]+:.+$/.test(env[raw.secretEnv] ?? ''))
          problem(
            [...here, 'secretEnv'],
            `the environment variable ${raw.secretEnv} (the key of upstream ${name}) must hold ACCESS_KEY:SECRET_KEY: kind ${kind} signs a JWT with them`,
          );
        else Object.assign(spec, { secretEnv: raw.secretEnv, apiKey: env[raw.secretEnv] });
      }
      if (raw.callbacks !== undefined && typeof raw.callbacks !== 'boolean')
        problem([...here, 'callbacks'], 'callbacks must be true or false');
      else if (raw.callbacks === true && kind === 'openai-videos')
        problem(
          [...here, 'callbacks'],
          'an upstream of kind openai-videos takes no callbacks: the Videos API has no completion callback (it is polled)',
        );
      // The callback URL is MEDIAFORGE_PUBLIC_URL's; without it the service names its listen address, which only an upstream on this host can reach.
      else if (
        raw.callbacks === true &&
        !options.withoutSecrets &&
        !env.MEDIAFORGE_PUBLIC_URL &&
        !(url && isLoopback(url))
      )
        problem(
          [...here, 'callbacks'],
          `callbacks: true needs MEDIAFORGE_PUBLIC_URL, the address upstream ${name} calls back (unset, only an upstream on this host, a loopback baseUrl, could reach the service)`,
        );
      spec.callbacks = raw.callbacks === true;
      if (raw.submitTimeoutSeconds !== undefined) {
        const seconds = raw.submitTimeoutSeconds;
        if (
          !Number.isSafeInteger(seconds) ||
          (seconds as number) < 1 ||
          (seconds as number) > MAX_SUBMIT_TIMEOUT_SECONDS
        )
          problem(
            [...here, 'submitTimeoutSeconds'],
            `submitTimeoutSeconds must be a whole number from 1 to ${MAX_SUBMIT_TIMEOUT_SECONDS} (how long a submit waits for its answer)`,
          );
        else spec.submitTimeoutSeconds = seconds as number;
      }
      if (raw.references !== undefined) {
        if (raw.references !== 'stored' && raw.references !== 'original')
          problem(
            [...here, 'references'],
            "references must be stored (the provider is sent signed links to the copies the service measured) or original (the customer's own URLs)",
          );
        else spec.references = raw.references;
      }
    }
    if (raw.maxInFlight !== undefined) {
      if (!Number.isSafeInteger(raw.maxInFlight) || (raw.maxInFlight as number) < 1)
        problem([...here, 'maxInFlight'], 'maxInFlight must be a whole number >= 1');
      else spec.maxInFlight = raw.maxInFlight as number;
    }
    if (raw.maxInFlightPerAccount !== undefined) {
      const share = raw.maxInFlightPerAccount;
      if (!Number.isSafeInteger(share) || (share as number) < 1)
        problem([...here, 'maxInFlightPerAccount'], 'maxInFlightPerAccount must be a whole number >= 1');
      else if (spec.maxInFlight === undefined)
        problem(
          [...here, 'maxInFlightPerAccount'],
          'maxInFlightPerAccount is a share of maxInFlight: set maxInFlight too',
        );
      else if ((share as number) > spec.maxInFlight)
        problem(
          [...here, 'maxInFlightPerAccount'],
          `maxInFlightPerAccount must be at most maxInFlight (${spec.maxInFlight})`,
        );
      else spec.maxInFlightPerAccount = share as number;
    }
    const cost = readCost(raw.cost, [...here, 'cost'], problem);
    if (cost) spec.cost = cost;
    upstreams.set(name, spec);
  }

  const routes = new Map<string, RouteSpec[]>();
  if (!isObject(data.models)) problem(['models'], 'models must be a map of model ids to their deployments');
  for (const [id, raw] of Object.entries(isObject(data.models) ? data.models : {})) {
    const here: Path = ['models', id];
    const model = catalogue.get(id);
    if (!model) {
      problem(here, `unknown model id "${id}" (GET /api/v1/models lists the catalogue)`);
      continue;
    }
    if (!Array.isArray(raw) || raw.length === 0) {
      problem(here, 'a model has a list of deployments (- upstream: NAME ...)');
      continue;
    }
    const list: RouteSpec[] = [];
    const seen = new Set<string>();
    raw.forEach((entry: unknown, index) => {
      const place: Path = [...here, index];
      if (!isObject(entry))
        return problem(place, 'a deployment is a map (upstream, upstreamModel, priority, weight, cost)');
      for (const key of Object.keys(entry))
        if (!ROUTE_KEYS.includes(key)) problem([...place, key], `unknown key "${key}" (${ROUTE_KEYS.join(', ')})`);
      const upstream = upstreams.get(String(entry.upstream));
      if (typeof entry.upstream !== 'string') return problem(place, 'a deployment names its upstream');
      if (!upstream)
        return problem(
          [...place, 'upstream'],
          `unknown upstream "${entry.upstream}"${upstreams.size ? ` (${[...upstreams.keys()].join(', ')})` : ''}`,
        );
      if (seen.has(entry.upstream))
        problem([...place, 'upstream'], `upstream ${entry.upstream} is listed twice for ${id}`);
      seen.add(entry.upstream);
      // What a protocol cannot run is derived by the generator (generated/provider-mappings.ts): only routing it is refused.
      const notServed = upstream.kind === 'simulator' ? undefined : notServedBy(upstream.kind, id);
      if (notServed)
        problem(
          [...place, 'upstream'],
          `an upstream of kind ${upstream.kind} cannot run ${id}: ${notServedText(upstream.kind, notServed)}`,
        );
      if (
        entry.upstreamModel !== undefined &&
        (typeof entry.upstreamModel !== 'string' || entry.upstreamModel.length === 0)
      )
        problem([...place, 'upstreamModel'], 'upstreamModel must be the model id at the upstream');
      // A Replicate model is owner/name[:version]; the catalogue's ids (vendor/family/mode) never are, so the route must name it.
      else if (
        upstream.kind === 'replicate' &&
        !REPLICATE_MODEL.test(typeof entry.upstreamModel === 'string' ? entry.upstreamModel : id)
      ) {
        problem(
          entry.upstreamModel === undefined ? [...place, 'upstream'] : [...place, 'upstreamModel'],
          `an upstream of kind replicate needs upstreamModel: the Replicate model as owner/name or owner/name:version`,
        );
      }
      if (entry.priority !== undefined && !Number.isSafeInteger(entry.priority))
        problem([...place, 'priority'], 'priority must be a whole number (higher first)');
      if (entry.weight !== undefined && (!Number.isSafeInteger(entry.weight) || (entry.weight as number) < 1))
        problem([...place, 'weight'], 'weight must be a whole number >= 1');
      const cost = readCost(entry.cost, [...place, 'cost'], problem) ?? upstream.cost;
      list.push({
        upstream: upstream.name,
        upstreamModel: typeof entry.upstreamModel === 'string' ? entry.upstreamModel : id,
        priority: Number.isSafeInteger(entry.priority) ? (entry.priority as number) : 0,
        weight: Number.isSafeInteger(entry.weight) ? (entry.weight as number) : 1,
        ...(cost ? { cost } : {}),
      });
    });
    routes.set(id, list);
  }

  const cooldown = readCooldown(data.cooldown, problem);
  // Serve would then serve nothing, silently. Said only of an otherwise clean file: a file with other problems is refused for those.
  if (isObject(data.models) && routes.size === 0 && problems.length === 0)
    problem(
      ['models'],
      'the file routes no model: serve would serve nothing (list at least one model id under models)',
    );

  if (problems.length) throw new DeploymentsFileError(problems);
  return { file, text, upstreams, routes, cooldown };
}

/** Whether a URL names this host (127.0.0.0/8, ::1, localhost): an upstream there reaches the service's listen address. */
function isLoopback(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function safeUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/** `cost: { perSecond: "0.05", perVideo: "0.40" }`: USD amounts as text (or whole numbers), kept as integer millionths. */
function readCost(raw: unknown, at: Path, problem: (path: Path, message: string) => void): UpstreamCost | undefined {
  if (raw === undefined) return undefined;
  if (!isObject(raw)) {
    problem(at, 'cost is a map (perSecond, perVideo) of USD amounts');
    return undefined;
  }
  const cost: UpstreamCost = { perSecondMicros: 0, perVideoMicros: 0 };
  for (const [key, value] of Object.entries(raw)) {
    if (key !== 'perSecond' && key !== 'perVideo') {
      problem([...at, key], `unknown key "${key}" (perSecond, perVideo)`);
      continue;
    }
    const micros =
      typeof value === 'string'
        ? usdToMicros(value)
        : Number.isSafeInteger(value) && (value as number) >= 0
          ? (value as number) * 1_000_000
          : undefined;
    if (micros === undefined)
      problem([...at, key], `${key} must be a USD amount as text, at most six decimals ("0.05")`);
    else cost[key === 'perSecond' ? 'perSecondMicros' : 'perVideoMicros'] = micros;
  }
  return cost;
}

/** The `cooldown` keys: each a whole number of its unit, with its default and its least value. */
const COOLDOWN_NUMBERS = {
  failures: {
    to: 'failures',
    least: 1,
    scale: 1,
    what: 'failing tasks of one owner within the window that cool the deployment for that owner',
  },
  seconds: { to: 'ms', least: 1, scale: 1000, what: 'the length of a cool-down' },
  windowSeconds: { to: 'windowMs', least: 1, scale: 1000, what: 'how far back failures count' },
  minTasks: {
    to: 'minTasks',
    least: 1,
    scale: 1,
    what: 'failing tasks within the window that cool the deployment for everyone',
  },
  minOwners: { to: 'minOwners', least: 1, scale: 1, what: 'distinct owners of those tasks' },
  minFailurePercent: {
    to: 'minFailurePercent',
    least: 0,
    scale: 1,
    what: "the failed share of the deployment's calls within the window",
  },
  probeSeconds: { to: 'probeMs', least: 1, scale: 1000, what: 'how often an unwell deployment is probed again' },
} as const satisfies Record<string, { to: keyof Cooldown; least: number; scale: number; what: string }>;

/** The file's `cooldown` section over the defaults (docs/deployments.md). */
function readCooldown(raw: unknown, problem: (path: (string | number)[], message: string) => void): Cooldown {
  if (raw === undefined) return DEFAULT_COOLDOWN;
  const keys = [...Object.keys(COOLDOWN_NUMBERS), 'singleTenant'].join(', ');
  if (!isObject(raw)) {
    problem(['cooldown'], `cooldown is a map (${keys})`);
    return DEFAULT_COOLDOWN;
  }
  const cooldown: Cooldown = { ...DEFAULT_COOLDOWN };
  for (const [key, value] of Object.entries(raw)) {
    if (key === 'singleTenant') {
      if (typeof value !== 'boolean') problem(['cooldown', key], 'singleTenant is true or false');
      else cooldown.singleTenant = value;
      continue;
    }
    const spec = COOLDOWN_NUMBERS[key as keyof typeof COOLDOWN_NUMBERS];
    if (!spec) {
      problem(['cooldown', key], `unknown key "${key}" (${keys})`);
      continue;
    }
    if (!Number.isSafeInteger(value) || (value as number) < spec.least) {
      problem(['cooldown', key], `${key} must be a whole number >= ${spec.least} (${spec.what})`);
      continue;
    }
    if (key === 'minFailurePercent' && (value as number) > 100) {
      problem(['cooldown', key], `${key} must be at most 100 (${spec.what})`);
      continue;
    }
    cooldown[spec.to] = (value as number) * spec.scale;
  }
  return cooldown;
}
