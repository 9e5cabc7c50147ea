import type { Handlers } from '../../../generated/routes.js';
import { ApiError } from '../../errors.js';
import type { ApiRequest } from '../api-request.js';

/** Operations of the contract not served by this version yet: a clear 501, never a silent stub. */
const notImplemented = async (): Promise<never> => {
  throw new ApiError('not_implemented');
};

export type PendingOperation =
  | 'createUploadTicket' | 'uploadFile' | 'commitFile' | 'importFile' | 'createDownloadUrl'
  | 'listAssets' | 'saveAsset' | 'getAsset' | 'renameAsset' | 'deleteAsset' | 'listEntities' | 'getAssetUsage'
  | 'createVideo' | 'listVideos' | 'retrieveVideo' | 'deleteVideo' | 'downloadVideoContent' | 'listCompatModels';

export const pendingHandlers: Pick<Handlers<ApiRequest>, PendingOperation> = {
  createUploadTicket: notImplemented,
  uploadFile: notImplemented,
  commitFile: notImplemented,
  importFile: notImplemented,
  createDownloadUrl: notImplemented,
  listAssets: notImplemented,
  saveAsset: notImplemented,
  getAsset: notImplemented,
  renameAsset: notImplemented,
  deleteAsset: notImplemented,
  listEntities: notImplemented,
  getAssetUsage: notImplemented,
  createVideo: notImplemented,
  listVideos: notImplemented,
  retrieveVideo: notImplemented,
  deleteVideo: notImplemented,
  downloadVideoContent: notImplemented,
  listCompatModels: notImplemented,
};
