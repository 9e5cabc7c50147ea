import type { ModelInfo } from '../../generated/catalogue.js';
import type { Deployment, InputRefusal } from '../deployments/deployment.js';

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** What the operator pays the upstream, in millionths of a USD: per second of output and/or per video. */
export interface UpstreamCost {
  perSecondMicros: number;
  perVideoMicros: number;
}

/** One way of running one model: a deployment, the model's id there, its tier and share, its cost. */
export interface Route {
  deployment: Deployment;
  upstreamModel: string;
  /** Higher first; routes of one priority form a tier. */
  priority: number;
  /** Share of the tier's traffic (relative to the other routes of the tier). */
  weight: number;
  cost?: UpstreamCost;
}

export interface DeploymentSettings {
  /** Tasks submitted and not yet ended, across all processes (counted in the database). */
  maxInFlight?: number;
  /** The most of those one account may hold (its share), so that one account cannot take every slot. */
  maxInFlightPerAccount?: number;
}

/**
 * When a deployment cools down, for whom and for how long: the deployments file's `cooldown`
 * section (docs/deployments.md). Health is judged on evidence from many tasks and owners, never
 * one (runtime/routing/evidence.ts).
 */
export interface Cooldown {
  /** Failing tasks of one owner on a deployment within the window that cool it for that owner alone. */
  failures: number;
  /** How long a cool-down lasts (for one owner, or for everyone). */
  ms: number;
  /** How far back evidence counts. */
  windowMs: number;
  /** For everyone: at least this many failing tasks within the window ... */
  minTasks: number;
  /** ... of at least this many distinct owners (paying, non-playground accounts) ... */
  minOwners: number;
  /** ... and at least this share (percent) of the deployment's calls within the window failed. */
  minFailurePercent: number;
  /** How often a cooling or down deployment (or one an owner is cooling on) is probed again. */
  probeMs: number;
  /** One tenant: any owner's `failures` failing tasks within the window cool the deployment for everyone. */
  singleTenant: boolean;
}

export const DEFAULT_COOLDOWN: Cooldown = {
  failures: 3,
  ms: 30_000,
  windowMs: 60_000,
  minTasks: 5,
  minOwners: 3,
  minFailurePercent: 50,
  probeMs: 30_000,
  singleTenant: false,
};

/**
 * Every deployment of the service and the routes of every model. Without a deployments file the
 * service routes every model to each deployment that accepts it, in the order given (the first
 * is the highest tier): the embedded simulator alone by default. With one, a model the file does
 * not route is not served (GET /models leaves it out, createTask answers no_deployment).
 * Picking among the routes needs the database (capacity, cool-downs): runtime/routing/candidates.ts and runtime/routing/health.ts.
 */
export class Deployments {
  private readonly routes?: ReadonlyMap<string, Route[]>;
  readonly settings: ReadonlyMap<string, DeploymentSettings>;
  readonly cooldown: Cooldown;

  constructor(
    private readonly all: Deployment[],
    options: {
      routes?: ReadonlyMap<string, Route[]>;
      settings?: ReadonlyMap<string, DeploymentSettings>;
      cooldown?: Cooldown;
    } = {},
  ) {
    this.routes = options.routes;
    this.settings = options.settings ?? new Map();
    this.cooldown = options.cooldown ?? DEFAULT_COOLDOWN;
  }

  /** The routes of a model whose deployment accepts it (and, given an input, can take that input). */
  routesFor(model: ModelInfo, input?: Record<string, unknown>): Route[] {
    const routes = this.routes
      ? (this.routes.get(model.id) ?? [])
      : this.all.map((deployment, i) => ({
          deployment,
          upstreamModel: model.id,
          priority: this.all.length - i,
          weight: 1,
        }));
    return routes.filter(
      (r) =>
        r.deployment.accepts(model) && (input === undefined || (r.deployment.acceptsInput?.(model, input) ?? true)),
    );
  }

  /**
   * When the model has routes but none of them can take this input (a value a protocol has no
   * counterpart for): per field at fault, the value and what the routes refusing on it take
   * instead. Undefined when some route takes the input, or when the model has no route at all
   * (that is availability's answer). Read from the deployments file and the generated mappings
   * only, never from health: no retry can change it.
   */
  unservable(model: ModelInfo, input: Record<string, unknown>): InputRefusal[] | undefined {
    const routes = this.routesFor(model);
    if (routes.length === 0 || this.routesFor(model, input).length > 0) return undefined;
    const byField = new Map<string, InputRefusal>();
    for (const { deployment } of routes) {
      const refusal = deployment.inputRefusal?.(model, input);
      if (!refusal) continue;
      const seen = byField.get(refusal.field);
      if (!seen) byField.set(refusal.field, { ...refusal, takes: [...refusal.takes] });
      else for (const value of refusal.takes) if (!seen.takes.some((t) => same(t, value))) seen.takes.push(value);
    }
    return [...byField.values()];
  }

  /** Whether the model (and this input, if given) has a deployment that is available: what GET /models lists and createTask admits. */
  serves(model: ModelInfo, input?: Record<string, unknown>): boolean {
    return this.routesFor(model, input).some((r) => r.deployment.isAvailable());
  }

  /** Whether a deployment the model is routed to is sent the service's copies of external references (the check lane then stores them). */
  storesReferences(model: ModelInfo): boolean {
    return this.routesFor(model).some((r) => r.deployment.referenceLinks === 'stored');
  }

  /** The route a task was submitted on (its cost), if the file still has it. */
  routeOf(model: ModelInfo, deploymentName: string): Route | undefined {
    return this.routesFor(model).find((r) => r.deployment.name === deploymentName);
  }

  /** The model ids at a deployment of the file's routes to it (what a probe may ask about), in the file's order. */
  upstreamModelsAt(name: string): string[] {
    return [...(this.routes?.values() ?? [])]
      .flat()
      .flatMap((r) => (r.deployment.name === name ? [r.upstreamModel] : []));
  }

  byName(name: string): Deployment | undefined {
    return this.all.find((d) => d.name === name);
  }

  list(): readonly Deployment[] {
    return this.all;
  }

  maxInFlight(name: string): number | undefined {
    return this.settings.get(name)?.maxInFlight;
  }

  maxInFlightPerAccount(name: string): number | undefined {
    return this.settings.get(name)?.maxInFlightPerAccount;
  }

  close(): void {
    for (const deployment of this.all) deployment.close?.();
  }
}
