import { PageIterator } from '../core/pagination.js';
import type { Core, RequestOptions } from '../core/request.js';
import type { Asset, AssetUsage, Entity, ListAssetsQuery } from '../types.js';

/** The private, long-term asset library of the workspace the key reaches. */
export class Assets {
  constructor(private readonly core: Core) {}

  /** The library's assets, newest first: `for await (const page of client.assets.list())`. */
  list(query: ListAssetsQuery = {}, options: RequestOptions = {}): PageIterator<Asset> {
    return new PageIterator<Asset>(async (cursor) => {
      const result = await this.core.call<{ items: Asset[]; nextCursor: string | null }>(
        (signal) =>
          this.core.api.GET('/api/v1/assets', {
            params: { query: { ...query, ...(cursor ? { cursor } : {}) } },
            signal,
          }),
        'safe',
        options,
      );
      return { ...result.data, requestId: result.requestId };
    });
  }

  /** Saves a succeeded task's output into the library (POST /assets). */
  async save(taskId: string, options: RequestOptions & { name?: string | undefined } = {}): Promise<Asset> {
    const { name, ...request } = options;
    return (
      await this.core.call<Asset>(
        (signal) => this.core.api.POST('/api/v1/assets', { body: { taskId, ...(name ? { name } : {}) }, signal }),
        'unsafe',
        request,
      )
    ).data;
  }

  async get(assetId: string, options: RequestOptions = {}): Promise<Asset> {
    return (
      await this.core.call<Asset>(
        (signal) => this.core.api.GET('/api/v1/assets/{assetId}', { params: { path: { assetId } }, signal }),
        'safe',
        options,
      )
    ).data;
  }

  async rename(assetId: string, name: string, options: RequestOptions = {}): Promise<Asset> {
    return (
      await this.core.call<Asset>(
        (signal) =>
          this.core.api.PATCH('/api/v1/assets/{assetId}', { params: { path: { assetId } }, body: { name }, signal }),
        'safe',
        options,
      )
    ).data;
  }

  async delete(assetId: string, options: RequestOptions = {}): Promise<{ assetId: string; deleted: true }> {
    return (
      await this.core.call<{ assetId: string; deleted: true }>(
        (signal) => this.core.api.DELETE('/api/v1/assets/{assetId}', { params: { path: { assetId } }, signal }),
        'unsafe',
        options,
      )
    ).data;
  }

  /** The user's characters (named subjects built from 2 to 4 images). */
  async entities(options: RequestOptions = {}): Promise<Entity[]> {
    return (
      await this.core.call<{ items: Entity[] }>(
        (signal) => this.core.api.GET('/api/v1/assets/entities', { signal }),
        'safe',
        options,
      )
    ).data.items;
  }

  /** Storage plan and usage. */
  async usage(options: RequestOptions = {}): Promise<AssetUsage> {
    return (
      await this.core.call<AssetUsage>(
        (signal) => this.core.api.GET('/api/v1/assets/usage', { signal }),
        'safe',
        options,
      )
    ).data;
  }
}
