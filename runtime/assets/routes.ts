import type { Handlers } from '../../generated/routes.js';
import { ApiError } from '../errors.js';
import { NAME_RULE, readBody } from '../files/body.js';
import { ASSET_KINDS } from '../files/probe.js';
import type { ApiRequest } from '../http/api-request.js';
import { listEntities } from './entities.js';
import { assetOfOwner, deleteAssetOfOwner, listLibrary, ownerOf, toAsset } from './library.js';
import { saveTaskOutput } from './save-output.js';
import { usageReport } from './storage.js';

type AssetHandlers = Pick<Handlers<ApiRequest>, 'listAssets' | 'saveAsset' | 'getAsset' | 'renameAsset' | 'deleteAsset' | 'listEntities' | 'getAssetUsage'>;

const NO_STORE = { 'Cache-Control': 'no-store' };

function parseLimit(value: string | undefined): number {
  if (value === undefined) return 20;
  const limit = /^\d{1,3}$/.test(value) ? Number(value) : Number.NaN;
  if (!(limit >= 1 && limit <= 100)) throw new ApiError('invalid_parameter', { param: 'limit' }, [], 'limit');
  return limit;
}

/**
 * The private asset library of the key's workspace: a personal key reaches the personal library,
 * a team workspace key that team's; any other library's asset is the same 404 (40402) as an
 * unknown one. Only short private previews are returned.
 */
export const assetHandlers: AssetHandlers = {
  async listAssets(req) {
    const kind = req.query('kind');
    if (kind !== undefined && !(ASSET_KINDS as readonly string[]).includes(kind)) throw new ApiError('invalid_parameter', { param: 'kind' }, [], 'kind');
    const page = await listLibrary(req.ctx, ownerOf(req.caller), { cursor: req.query('cursor'), limit: parseLimit(req.query('limit')), kind });
    return { status: 200, data: { items: page.rows.map((row) => toAsset(req.ctx, row)), nextCursor: page.nextCursor }, headers: NO_STORE };
  },

  async saveAsset(req) {
    const body = readBody(req.body, { taskId: { type: 'string', required: true, minLength: 1, maxLength: 100 }, name: NAME_RULE });
    const row = await saveTaskOutput(req.ctx, req.caller, body.taskId, body.name as string | undefined);
    return { status: 200, data: toAsset(req.ctx, row), headers: NO_STORE };
  },

  async getAsset(req) {
    const row = await assetOfOwner(req.ctx, ownerOf(req.caller), req.param('assetId'));
    return { status: 200, data: toAsset(req.ctx, row), headers: NO_STORE };
  },

  /** Changes the display name only; the uri stays. */
  async renameAsset(req) {
    const owner = ownerOf(req.caller);
    const row = await assetOfOwner(req.ctx, owner, req.param('assetId'));
    const { name } = readBody(req.body, { name: { ...NAME_RULE, required: true } }) as { name: string };
    await req.ctx.db.kysely.updateTable('assets').set({ name }).where('id', '=', row.id).where('deleted_at', 'is', null).execute();
    return { status: 200, data: toAsset(req.ctx, { ...row, name }), headers: NO_STORE };
  },

  async deleteAsset(req) {
    const assetId = req.param('assetId');
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
