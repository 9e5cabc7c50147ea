import { outboundPolicy, type Config } from '../config.js';
import type { Deployment } from '../deployments/deployment.js';
import type { DeploymentsPlan, UpstreamSpec } from './deployments-file.js';
import { referenceLinksOf } from '../../generated/provider-mappings.js';
import { providerProfile } from '../../generated/provider-profiles.js';
import { FalQueueDeployment } from '../upstreams/fal-queue.js';
import { JobsDeployment } from '../upstreams/jobs.js';
import { OpenAiVideosDeployment } from '../upstreams/openai-videos.js';
import { ProfileDeployment } from '../upstreams/profile-upstream.js';
import { ReplicateDeployment } from '../upstreams/replicate.js';
import { redactedDeployment } from '../upstreams/redacted-deployment.js';
import { Deployments, type Route } from './router.js';
import { secretRedactor } from '../upstreams/secret-redactor.js';
import { SimulatorDeployment } from '../simulator/simulator.js';
import type { UpstreamOptions } from '../upstreams/upstream-options.js';

/** Longest wait for one answer of an upstream (status and headers; a body streams on). */
const REQUEST_TIMEOUT_MS = 20_000;
/** Longest silence while a result downloads. */
const RESULT_IDLE_MS = 60_000;

/** One constructor per coded protocol adapter. */
const CODED: Record<string, (options: UpstreamOptions) => Deployment> = {
  'openai-videos': (options) => new OpenAiVideosDeployment(options),
  jobs: (options) => new JobsDeployment(options),
  'fal-queue': (options) => new FalQueueDeployment(options),
  replicate: (options) => new ReplicateDeployment(options),
};

/**
 * The constructor of a kind's adapter: a coded protocol's, or the one profile adapter with the
 * profile of that name (generated/provider-profiles.ts); undefined for a kind neither knows.
 */
export function adapterOf(kind: string): ((options: UpstreamOptions) => Deployment) | undefined {
  if (Object.hasOwn(CODED, kind)) return CODED[kind];
  const profile = providerProfile(kind);
  return profile ? (options) => new ProfileDeployment(options, profile) : undefined;
}

/** The embedded simulator with the service's settings, under a name. */
export function simulatorDeployment(config: Config, now: () => number, name = 'simulator'): SimulatorDeployment {
  return new SimulatorDeployment(
    {
      latencyMs: config.simulatorLatencyMs,
      failWhenPromptContains: config.simulatorFailWhenPromptContains,
      now,
    },
    name,
  );
}

function upstreamDeployment(spec: UpstreamSpec, config: Config, now: () => number): Deployment {
  if (spec.kind === 'simulator') return simulatorDeployment(config, now, spec.name);
  const adapter = adapterOf(spec.kind);
  if (!adapter) throw new Error(`no adapter for kind ${spec.kind} in this version`);
  const policy = outboundPolicy(config);
  // Whatever the upstream echoes of its key (or of a token signed with it) is redacted before any part of the service reads it.
  const redactor = secretRedactor(spec.apiKey, now);
  const adapted = adapter({
    name: spec.name,
    baseUrl: spec.baseUrl!,
    ...(spec.apiKey ? { apiKey: spec.apiKey } : {}),
    callbacks: spec.callbacks,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    ...(spec.submitTimeoutSeconds !== undefined ? { submitTimeoutMs: spec.submitTimeoutSeconds * 1000 } : {}),
    results: {
      policy,
      maxBytes: config.upstreamResultMaxBytes,
      timeoutMs: config.upstreamResultTimeoutMs,
      idleMs: RESULT_IDLE_MS,
    },
    pollFallbackMs: config.upstreamPollMs,
    now,
    hideDerived: redactor.hide,
  });
  // How references reach it: the deployments file's word, else its protocol's (spec/providers/<kind>.yaml).
  return { ...redactedDeployment(adapted, redactor), referenceLinks: spec.references ?? referenceLinksOf(spec.kind) };
}

/** The service's deployments: the operator's file when there is one, else the embedded simulator serving every model. */
export function buildDeployments(config: Config, now: () => number, plan?: DeploymentsPlan): Deployments {
  if (!plan) return new Deployments([simulatorDeployment(config, now)]);
  const byName = new Map(
    [...plan.upstreams.values()].map((spec) => [spec.name, upstreamDeployment(spec, config, now)]),
  );
  const routes = new Map<string, Route[]>(
    [...plan.routes].map(([model, list]) => [
      model,
      list.map((r) => ({
        deployment: byName.get(r.upstream)!,
        upstreamModel: r.upstreamModel,
        priority: r.priority,
        weight: r.weight,
        ...(r.cost ? { cost: r.cost } : {}),
      })),
    ]),
  );
  const settings = new Map(
    [...plan.upstreams.values()].map((spec) => [
      spec.name,
      spec.maxInFlight !== undefined
        ? {
            maxInFlight: spec.maxInFlight,
            maxInFlightPerAccount: spec.maxInFlightPerAccount ?? defaultShare(spec.maxInFlight),
          }
        : {},
    ]),
  );
  return new Deployments([...byName.values()], { routes, settings, cooldown: plan.cooldown });
}

/**
 * One account's share of a deployment's slots when the file names none: half, rounded up. Every
 * other account then finds at least the other half free of that one; two busy accounts can still
 * fill the deployment between them (issue 25, N5).
 */
function defaultShare(maxInFlight: number): number {
  return Math.ceil(maxInFlight / 2);
}
