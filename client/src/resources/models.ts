import type { Core, RequestOptions } from '../core/request.js';
import type { ModelId, ModelSummary } from '../types.js';

export class Models {
  constructor(private readonly core: Core) {}

  /** Every callable model with its prices (GET /models); `includeSchema` adds the input schemas. */
  async list(options: RequestOptions & { includeSchema?: boolean | undefined } = {}): Promise<ModelSummary[]> {
    const { includeSchema, ...request } = options;
    const result = await this.core.call<{ items: ModelSummary[] }>(
      (signal) =>
        this.core.api.GET('/api/v1/models', { params: { query: includeSchema ? { includeSchema: '1' } : {} }, signal }),
      'safe',
      request,
    );
    return result.data.items;
  }

  /** One model with its input schema (GET /models/{model}). */
  async get(model: ModelId | (string & {}), options: RequestOptions = {}): Promise<ModelSummary> {
    const result = await this.core.call<ModelSummary>(
      (signal) => this.core.api.GET('/api/v1/models/{model}', { params: { path: { model } }, signal }),
      'safe',
      options,
    );
    return result.data;
  }
}
