import type { Handlers } from '../../generated/routes.js';
import { ownerOf, toAsset } from '../assets/library.js';
import { ApiError } from '../errors.js';
import type { ApiRequest } from '../http/api-request.js';
import { taskOfCaller } from '../tasks/task-queries.js';
import { outputAssets } from '../tasks/task-record.js';
import { NAME_RULE, readBody } from './body.js';
import { importLora } from './import.js';
import { commitUpload, createTicket, receiveUpload, type TicketRequest } from './uploads.js';

type FileHandlers = Pick<Handlers<ApiRequest>, 'createUploadTicket' | 'uploadFile' | 'commitFile' | 'importFile' | 'createDownloadUrl'>;

const NO_STORE = { 'Cache-Control': 'no-store' };

/** The files operations: the upload flow (ticket, signed PUT, commit), the LoRA import and fresh output links. */
export const fileHandlers: FileHandlers = {
  async createUploadTicket(req) {
    const body = readBody(req.body, {
      fileName: { ...NAME_RULE, required: true },
      contentType: { type: 'string', required: true, minLength: 1, maxLength: 255 },
      size: { type: 'integer', required: true, minimum: 1 },
    });
    const ticket = await createTicket(req.ctx, ownerOf(req.caller), req.caller.keyId, body as unknown as TicketRequest);
    return { status: 200, data: ticket, headers: NO_STORE };
  },

  /** Authorized by the signed ticket in the URL, not by a key (route.auth is false). */
  async uploadFile(req) {
    const result = await receiveUpload(req.ctx, {
      fileId: req.param('fileId'),
      expires: req.query('expires'),
      sig: req.query('sig'),
      contentType: req.header('content-type'),
      contentLength: req.header('content-length'),
      body: req.body ?? req.raw.raw,
    });
    return { status: 200, data: result, headers: NO_STORE };
  },

  async commitFile(req) {
    const body = readBody(req.body, { name: NAME_RULE }, true);
    const row = await commitUpload(req.ctx, ownerOf(req.caller), req.param('fileId'), body.name as string | undefined);
    return { status: 200, data: toAsset(req.ctx, row), headers: NO_STORE };
  },

  async importFile(req) {
    const body = readBody(req.body, { url: { type: 'string', required: true, minLength: 1, maxLength: 2048 }, name: NAME_RULE });
    const row = await importLora(req.ctx, ownerOf(req.caller), body.url as string, body.name as string | undefined);
    return { status: 200, data: toAsset(req.ctx, row), headers: NO_STORE };
  },

  /** Fresh signed links (about 20 minutes) to the output of a finished task of the calling key. */
  async createDownloadUrl(req) {
    const body = readBody(req.body, { taskId: { type: 'string', required: true, minLength: 1, maxLength: 100 } });
    const row = await taskOfCaller(req.ctx, req.caller, body.taskId);
    const assets = row.state === 'succeeded' ? outputAssets(req.ctx, row) : null;
    if (!assets) throw new ApiError('invalid_parameter', { param: 'taskId' }, [], 'taskId');
    return { status: 200, data: { taskId: row.id, assets }, headers: NO_STORE };
  },
};
