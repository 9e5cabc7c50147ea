import type { ModelInfo } from '../../generated/catalogue.js';

/** What a deployment is asked to run: one task of one model. */
export interface DeploymentJob {
  taskId: string;
  model: ModelInfo;
  input: Record<string, unknown>;
  /** Length of the model's source clip when the service knows it (a task of the same key); a deployment measures URLs. */
  sourceClipSeconds?: number;
}

export interface DeploymentOutput {
  bytes: Uint8Array;
  mime: string;
  extension: string;
  durationSeconds: number;
}

export type DeploymentStatus =
  | { state: 'running'; progress: number; retryAfterMs: number }
  | { state: 'succeeded'; outputs: DeploymentOutput[]; outputSeconds: number; referenceClipSeconds?: (number | null)[]; sourceClipSeconds?: number }
  /** `reason` is the model's own English text; the service strips identifiers before showing it. */
  | { state: 'failed'; reason: string };

/**
 * A place that runs generations: the simulator, or an adapter for a real provider. Start returns
 * a handle that survives restarts (it is stored on the task); the worker polls it until it ends.
 */
export interface Deployment {
  readonly name: string;
  accepts(model: ModelInfo): boolean;
  isAvailable(): boolean;
  start(job: DeploymentJob): Promise<string>;
  poll(handle: string, job: DeploymentJob): Promise<DeploymentStatus>;
  /** How long after start a first poll can learn something (a provider's typical latency); 0 or absent: poll at once. */
  firstPollAfterMs?(job: DeploymentJob): number;
}

export class Deployments {
  constructor(private readonly all: Deployment[]) {}

  /** The first available deployment that serves the model, if any. */
  pick(model: ModelInfo): Deployment | undefined {
    return this.all.find((d) => d.accepts(model) && d.isAvailable());
  }

  byName(name: string): Deployment | undefined {
    return this.all.find((d) => d.name === name);
  }
}
