import type { Handlers } from '../../../generated/routes.js';
import type { ApiRequests } from '../api-request.js';
import { listEntities } from '../../assets/entities.js';
import { assetOfOwner, deleteAssetOfOwner, listLibrary, ownerOf, renameAsset, toAsset } from '../../assets/library.js';
import { saveTaskOutput } from '../../assets/save-output.js';
import { usageReport } from '../../assets/storage.js';
import { taskOfCaller } from '../../tasks/task-queries.js';

type AssetHandlers = Pick<
  Handlers<ApiRequests>,
  'listAssets' | 'saveAsset' | 'getAsset' | 'renameAsset' | 'deleteAsset' | 'listEntities' | 'getAssetUsage'
>;

const NO_STORE = { 'Cache-Control': 'no-store' };

/**
 * The private asset library of the key's workspace: a personal key reaches the personal library,
 * a team workspace key that team's; any other library's asset is the same 404 (40402) as an
 * unknown one. Only short private previews are returned.
 */
export const assetHandlers: AssetHandlers = {
  async listAssets(req) {
    const { cursor, limit, kind } = req.query;
    const page = await listLibrary(req.ctx, ownerOf(req.caller), { cursor, limit, kind });
    return {
      status: 200,
      data: { items: page.rows.map((row) => toAsset(req.ctx, row)), nextCursor: page.nextCursor },
      headers: NO_STORE,
    };
  },

  async saveAsset(req) {
    const task = await taskOfCaller(req.ctx, req.caller, req.body.taskId);
    const row = await saveTaskOutput(req.ctx, req.caller, task, req.body.name);
    return { status: 200, data: toAsset(req.ctx, row), headers: NO_STORE };
  },

  async getAsset(req) {
    const row = await assetOfOwner(req.ctx, ownerOf(req.caller), req.params.assetId);
    return { status: 200, data: toAsset(req.ctx, row), headers: NO_STORE };
  },

  /** Changes the display name only; the uri stays. */
  async renameAsset(req) {
    const owner = ownerOf(req.caller);
    const row = await assetOfOwner(req.ctx, owner, req.params.assetId);
    const { name } = req.body;
    await renameAsset(req.ctx.db.kysely, row.id, name);
    return { status: 200, data: toAsset(req.ctx, { ...row, name }), headers: NO_STORE };
  },

  async deleteAsset(req) {
    const { assetId } = req.params;
    await deleteAssetOfOwner(req.ctx, ownerOf(req.caller), assetId);
    return { status: 200, data: { assetId, deleted: true as const } };
  },

  async listEntities(req) {
    return { status: 200, data: { items: await listEntities(req.ctx.db, ownerOf(req.caller)) }, headers: NO_STORE };
  },

  async getAssetUsage(req) {
    return { status: 200, data: await usageReport(req.ctx, ownerOf(req.caller)), headers: NO_STORE };
  },
};
