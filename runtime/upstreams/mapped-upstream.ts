import type { ModelInfo } from '../../generated/catalogue.js';
import { providerMapping } from '../../generated/provider-mappings.js';
import type { DeploymentJob, ProbeResult } from '../deployments/deployment.js';
import { probeOfAnswer, probeOfError } from './probe-answer.js';
import type { InputRefusal } from '../deployments/deployment.js';
import { inputMaps, inputRefusal } from './map-input.js';
import { resultStream, UpstreamHttp } from './upstream-http.js';
import type { UpstreamOptions } from './upstream-options.js';

/**
 * What every hosted-upstream adapter shares: its name from the deployments file, the models and
 * inputs its protocol's field mapping can carry (spec/providers/<protocol>.yaml, generated), one
 * HTTP client with the protocol's headers, and no availability of its own (the router's slots and
 * cool-downs decide). Each adapter adds its protocol's submit, poll and cancel.
 */
export abstract class MappedUpstream {
  readonly callbacks: boolean;
  protected readonly http: UpstreamHttp;

  constructor(
    protected readonly options: UpstreamOptions,
    private readonly protocol: string,
    headers: Record<string, string>,
    callbacks = options.callbacks,
  ) {
    this.callbacks = callbacks;
    this.http = new UpstreamHttp(options.baseUrl, { ...headers, 'User-Agent': 'mediaforge-upstream/1' });
  }

  get name(): string {
    return this.options.name;
  }

  /** How long a submit waits for its answer: the upstream's submitTimeoutSeconds, else the request timeout. */
  get submitTimeoutMs(): number {
    return this.options.submitTimeoutMs ?? this.options.requestTimeoutMs;
  }

  accepts(model: ModelInfo): boolean {
    return providerMapping(this.protocol, model.id) !== undefined;
  }

  acceptsInput(model: ModelInfo, input: Record<string, unknown>): boolean {
    const mapping = providerMapping(this.protocol, model.id);
    return mapping !== undefined && inputMaps(mapping, input);
  }

  /** The value of the input this protocol cannot take, and what it takes of that field (for a 400 that says so). */
  inputRefusal(model: ModelInfo, input: Record<string, unknown>): InputRefusal | undefined {
    const mapping = providerMapping(this.protocol, model.id);
    return mapping && inputRefusal(mapping, input, model.inputSchema.properties);
  }

  isAvailable(): boolean {
    return true;
  }

  /** A result link's bytes, downloaded within the service's bounds and ended by the job's signal (runtime/worker/task-work.ts). */
  protected resultBytes(link: string, job: DeploymentJob, headers: Record<string, string> = {}): AsyncIterable<Buffer> {
    return resultStream(
      this.http,
      link,
      { ...this.options.results, ...(job.signal ? { signal: job.signal } : {}) },
      headers,
    );
  }

  /** A probe: one GET that creates nothing, with the key; `expected` are the protocol's own answers to it. */
  protected async probeGet(target: URL, expected: readonly number[]): Promise<ProbeResult> {
    try {
      const answer = await this.http.json(target, { method: 'GET', timeoutMs: this.options.requestTimeoutMs });
      return probeOfAnswer(`GET ${target.pathname}`, answer.status, expected);
    } catch (error) {
      return probeOfError(error);
    }
  }

  close(): void {
    this.http.close();
  }
}
