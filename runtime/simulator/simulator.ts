import { createHash } from 'node:crypto';
import type { ModelInfo } from '../../generated/catalogue.js';
import type { Deployment, DeploymentJob, DeploymentStatus } from '../deployments/deployment.js';
import { RenderCache } from './render-cache.js';
import { simulatedOutputs } from './simulated-output.js';

/** Progress is reported at this many points of the latency (25, 50, 75 %), then the result. */
const PROGRESS_STEPS = 4;
/** The most bytes of rendered outputs a simulator keeps for the next task of the same shape. */
const RENDER_CACHE_BYTES = 32 * 1024 * 1024;

export interface SimulatorOptions {
  latencyMs: number;
  failWhenPromptContains?: string;
  now: () => number;
}

/** Range of duration_seconds a model accepts, read from its generated input schema. */
export function durationRange(
  model: ModelInfo,
): { min: number; max: number; auto?: number; default?: number } | undefined {
  const schema = model.inputSchema.properties.duration_seconds;
  if (!schema) return undefined;
  const anyOf = schema.anyOf as Record<string, number>[] | undefined;
  const range = anyOf ? anyOf[1] : (schema as Record<string, number>);
  return {
    min: range.minimum,
    max: range.maximum,
    auto: anyOf?.[0].const,
    default: schema.default as number | undefined,
  };
}

/**
 * The built-in deployment: it runs every model and mode, takes `latencyMs`, and returns a real
 * playable video of the requested length at the model's frame size and rate, in the asked
 * container, and the last frame when asked (see simulatedOutputs). A -1 duration is chosen from
 * the task id within the model's range. The handle carries the start time, so a restarted server
 * picks the task up where it stood.
 */
export class SimulatorDeployment implements Deployment {
  readonly kind = 'simulator';
  /** Nothing to reach and nothing that fails: never cooling. */
  readonly inProcess = true;
  /** Starting again only makes a new handle: nothing runs anywhere else. */
  readonly idempotentSubmit = true;
  private readonly rendered = new RenderCache(RENDER_CACHE_BYTES);
  constructor(
    private readonly options: SimulatorOptions,
    readonly name = 'simulator',
  ) {}

  accepts(): boolean {
    return true;
  }

  isAvailable(): boolean {
    return true;
  }

  async start(job: DeploymentJob): Promise<string> {
    return `sim:${this.options.now()}`;
  }

  /** A first look a step into the latency, so the task's progress moves before the result (see poll). */
  firstPollAfterMs(): number {
    return Math.ceil(this.options.latencyMs / PROGRESS_STEPS);
  }

  async poll(handle: string, job: DeploymentJob): Promise<DeploymentStatus> {
    const started = Number(handle.split(':')[1]);
    const elapsed = this.options.now() - started;
    if (elapsed < this.options.latencyMs) {
      const step = Math.ceil(this.options.latencyMs / PROGRESS_STEPS);
      return {
        state: 'running',
        progress: Math.min(99, Math.floor((elapsed * 100) / this.options.latencyMs)),
        retryAfterMs: Math.min(step, this.options.latencyMs - elapsed),
      };
    }
    const prompt = typeof job.input.prompt === 'string' ? job.input.prompt : '';
    const trigger = this.options.failWhenPromptContains;
    if (trigger && prompt.includes(trigger)) {
      // Shaped like a provider's reason, identifiers included, to exercise the scrubbing.
      return {
        state: 'failed',
        reason: `Content policy violation: the prompt was rejected by the safety filter (request ${job.taskId}).`,
      };
    }
    const { seconds, sourceSeconds } = this.outputSeconds(job);
    return {
      state: 'succeeded',
      outputSeconds: seconds,
      ...(sourceSeconds === undefined ? {} : { sourceClipSeconds: sourceSeconds }),
      outputs: simulatedOutputs(this.rendered, job.model, job.input, seconds),
    };
  }

  /**
   * The output length. A model that works on a supplied clip (the catalogue's sourceClip) takes the
   * clip's length: known for a task of the same key, else the model's assumed length, standing in for
   * the measurement a real deployment makes. `joined`: the clip plus the new segment; `clip-length`: the clip.
   */
  private outputSeconds(job: DeploymentJob): { seconds: number; sourceSeconds?: number } {
    const source = job.model.pricing.sourceClip;
    if (!source) return { seconds: this.newSeconds(job) };
    const sourceSeconds = job.sourceClipSeconds ?? source.assumedSeconds;
    if (source.output === 'clip-length') return { seconds: sourceSeconds, sourceSeconds };
    return { seconds: sourceSeconds + this.newSeconds(job), sourceSeconds };
  }

  /** The generated length: duration_seconds, or one chosen from the task id within the model's range for -1. */
  private newSeconds(job: DeploymentJob): number {
    const range = durationRange(job.model);
    const requested = job.input.duration_seconds;
    if (!range) return 5;
    if (typeof requested === 'number' && requested !== range.auto) return requested;
    const span = range.max - range.min + 1;
    const pick = createHash('sha256').update(job.taskId).digest().readUInt32BE(0) % span;
    return range.min + pick;
  }
}
