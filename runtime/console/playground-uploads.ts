import type { FastifyInstance } from 'fastify';
import { catalogue } from '../../generated/catalogue.js';
import { toAsset, type LibraryOwner } from '../assets/library.js';
import type { Context } from '../context.js';
import { ApiError, fieldIssue, invalidInput } from '../errors.js';
import { declaredKind } from '../files/probe.js';
import { commitUpload, createTicket, receiveUpload } from '../files/uploads.js';
import { sessionRoute } from './session-http.js';
import { playgroundCaller, type SessionUser } from './users.js';

/**
 * The library playground uploads go to: the playground account's personal library (the one its
 * tasks read service:// references from). Its storage plan follows the user's own lifetime
 * purchases, recorded on the API account; the free playground credits are a grant, not a purchase.
 */
export function playgroundLibrary(user: SessionUser): LibraryOwner {
  return { accountId: user.playgroundAccountId, library: 'personal', planAccountId: user.accountId };
}

/** The kind of file a model's reference field takes; 400 for an unknown model or a field that takes no file. */
function referenceKind(model: string | undefined, field: string | undefined): string {
  const info = model ? catalogue.get(model)?.info : undefined;
  if (!info) throw new ApiError('invalid_parameter', { param: 'model' });
  const kind = info.referenceFields.find(([name]) => name === field)?.[1];
  if (!kind) throw new ApiError('invalid_parameter', { param: 'field' });
  return kind;
}

/** X-File-Name is URI-encoded by the page (headers are Latin-1); control characters are dropped. */
function fileNameOf(header: string | string[] | undefined): string {
  let name = typeof header === 'string' ? header : '';
  try {
    name = decodeURIComponent(name);
  } catch {
    /* keep it as sent */
  }
  name = name
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim()
    .slice(0, 255);
  return name || 'upload';
}

function declaredSize(header: string | undefined): number {
  const size = header !== undefined && /^\d{1,15}$/.test(header) ? Number(header) : Number.NaN;
  if (!Number.isSafeInteger(size)) throw new ApiError('invalid_parameter', { param: 'Content-Length' });
  if (size < 1) throw invalidInput([fieldIssue('size', 'minimum', 'minimum', { limit: 1 })]);
  return size;
}

/**
 * POST /playground/api/uploads?model=ID&field=NAME: one file for one reference field of the
 * playground form, sent as the raw request body (Content-Type: its type, X-File-Name: its name).
 * It goes through the upload flow of the API in one request: a ticket for the declared type and
 * size (accepted kinds, the size cap, the storage plan), the bytes counted and sniffed as they
 * arrive, then the probe and the commit. Session and X-CSRF-Token as for every playground call;
 * every refusal is the API's business code in the session's language. Answers the Asset (its
 * `uri` goes into the field).
 */
export function registerPlaygroundUploads(app: FastifyInstance, ctx: Context) {
  sessionRoute(app, ctx, 'POST', '/playground/api/uploads', async ({ user, query, request }) => {
    const kind = referenceKind(query.model, query.field);
    const contentType = request.headers['content-type'] ?? '';
    const fileName = fileNameOf(request.headers['x-file-name']);
    const size = declaredSize(request.headers['content-length']);
    // A file of another kind than the field takes is refused before any bytes are kept.
    if (declaredKind(contentType, fileName) !== kind)
      throw new ApiError('file_type_not_allowed', { param: 'Content-Type' });
    const owner = playgroundLibrary(user);
    const caller = await playgroundCaller(ctx.db, user);
    const ticket = await createTicket(ctx, owner, caller.keyId, { fileName, contentType, size });
    const signed = new URL(ticket.uploadUrl);
    await receiveUpload(ctx, {
      fileId: ticket.fileId,
      expires: signed.searchParams.get('expires') ?? undefined,
      sig: signed.searchParams.get('sig') ?? undefined,
      contentType,
      contentLength: String(size),
      body: request.body,
    });
    return toAsset(ctx, await commitUpload(ctx, owner, ticket.fileId, fileName));
  });
}
