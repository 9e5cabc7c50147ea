import type { Handlers } from '../../../generated/routes.js';
import { ownerOf, toAsset } from '../../assets/library.js';
import { ApiError } from '../../errors.js';
import type { ApiRequests } from '../api-request.js';
import { taskOfCaller } from '../../tasks/task-queries.js';
import { outputAssets } from '../../tasks/task-record.js';
import { importLora } from '../../files/import.js';
import { commitUpload, createTicket, receiveUpload, type TicketRequest } from '../../files/uploads.js';

type FileHandlers = Pick<
  Handlers<ApiRequests>,
  'createUploadTicket' | 'uploadFile' | 'commitFile' | 'importFile' | 'createDownloadUrl'
>;

const NO_STORE = { 'Cache-Control': 'no-store' };

/** The files operations: the upload flow (ticket, signed PUT, commit), the LoRA import and fresh output links. */
export const fileHandlers: FileHandlers = {
  async createUploadTicket(req) {
    const ticket = await createTicket(req.ctx, ownerOf(req.caller), req.caller.keyId, req.body satisfies TicketRequest);
    return { status: 200, data: ticket, headers: NO_STORE };
  },

  /** Authorized by the signed ticket in the URL, not by a key (route.auth is false). */
  async uploadFile(req) {
    const result = await receiveUpload(req.ctx, {
      fileId: req.params.fileId,
      expires: req.query.expires,
      sig: req.query.sig,
      contentType: req.rawHeader('content-type'),
      contentLength: req.rawHeader('content-length'),
      body: (req.raw.body as NodeJS.ReadableStream | undefined) ?? req.raw.raw,
    });
    return { status: 200, data: result, headers: NO_STORE };
  },

  async commitFile(req) {
    const row = await commitUpload(req.ctx, ownerOf(req.caller), req.params.fileId, req.body?.name);
    return { status: 200, data: toAsset(req.ctx, row), headers: NO_STORE };
  },

  async importFile(req) {
    const row = await importLora(req.ctx, ownerOf(req.caller), req.body.url, req.body.name);
    return { status: 200, data: toAsset(req.ctx, row), headers: NO_STORE };
  },

  /** Fresh signed links (about 20 minutes) to the output of a finished task of the calling key. */
  async createDownloadUrl(req) {
    const row = await taskOfCaller(req.ctx, req.caller, req.body.taskId);
    const assets = row.state === 'succeeded' ? outputAssets(req.ctx, row) : null;
    if (!assets) throw new ApiError('invalid_parameter', { param: 'taskId' });
    return { status: 200, data: { taskId: row.id, assets }, headers: NO_STORE };
  },
};
