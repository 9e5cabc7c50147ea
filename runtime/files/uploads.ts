import type { Selectable } from 'kysely';
import { Readable } from 'node:stream';
import { assetRow, extensionOf, liveAssets, type AssetRow, type LibraryOwner } from '../assets/library.js';
import { insertWithRoom } from '../assets/storage.js';
import { BlobTooLargeError } from '../blobs/blob-store.js';
import type { Context } from '../context.js';
import { ApiError, fieldIssue, invalidInput } from '../errors.js';
import { newId } from '../ids.js';
import type { Database } from '../storage/schema.js';
import { peek } from './byte-reader.js';
import { declaredKind, headWanted, normalizeType, probeStored, sniff, type Probed } from './probe.js';
import { signUploadPath, verifyUploadSignature } from './tickets.js';

type UploadRow = Selectable<Database['uploads']>;

export interface TicketRequest {
  fileName: string;
  contentType: string;
  size: number;
}

/**
 * POST /common/upload-url: a single-use ticket for one file of a declared type and size. The type
 * must announce an accepted kind and the size fit both the service's cap and the library's plan;
 * the ticket's `maxBytes` is the declared size, so the upload cannot grow past what was checked.
 * The declared size is reserved against the plan with the ticket, in one transaction (see
 * `insertWithRoom`), until the file is committed or the ticket expires.
 */
/**
 * `receiver`: who takes the bytes. `store` (the API's tickets) is a presigned PUT on a store that
 * takes uploads itself (S3) and the service's own signed PUT otherwise; `service` is always the
 * service's own, for a caller that already holds the bytes in its request (the playground's form)
 * and streams them to the store through receiveUpload.
 */
export async function createTicket(
  ctx: Context,
  owner: LibraryOwner,
  keyId: string,
  request: TicketRequest,
  receiver: 'store' | 'service' = 'store',
) {
  const kind = declaredKind(request.contentType, request.fileName);
  if (!kind || !ctx.config.uploadKinds.includes(kind))
    throw new ApiError('file_type_not_allowed', { param: 'contentType' });
  if (request.size > ctx.config.uploadMaxBytes)
    throw invalidInput([fieldIssue('size', 'maximum', 'maximum', { limit: ctx.config.uploadMaxBytes })]);
  const now = ctx.clock.now();
  const fileId = newId('f');
  const expiresAt = now + ctx.config.uploadTicketTtlSeconds * 1000;
  const contentType = normalizeType(request.contentType);
  // A store that takes uploads itself (S3): the ticket is a PUT on it, the object's key fixed now.
  // No extension: the key is never served (the commit copies the bytes to the asset's own key).
  const direct = receiver === 'store' && ctx.blobs.presignPut ? ticketKeyOf(fileId) : null;
  await insertWithRoom(ctx, owner, request.size, async (trx) => {
    await trx
      .insertInto('uploads')
      .values({
        id: fileId,
        account_id: owner.accountId,
        library: owner.library,
        api_key_id: keyId,
        file_name: request.fileName,
        content_type: contentType,
        kind,
        declared_size: request.size,
        max_bytes: request.size,
        state: 'pending',
        received_bytes: null,
        blob_key: direct,
        asset_id: null,
        created_at: now,
        expires_at: expiresAt,
        uploaded_at: null,
      })
      .execute();
  });
  const uploadUrl =
    direct && ctx.blobs.presignPut
      ? await ctx.blobs.presignPut(direct, { size: request.size, contentType }, expiresAt, now)
      : `${ctx.config.publicUrl}${signUploadPath(ctx.secret, fileId, expiresAt)}`;
  return {
    fileId,
    uploadUrl,
    method: 'PUT' as const,
    headers: { 'Content-Type': contentType },
    expiresAt: new Date(expiresAt).toISOString(),
    maxBytes: request.size,
  };
}

export interface IncomingUpload {
  fileId: string;
  expires?: string;
  sig?: string;
  contentType?: string;
  contentLength?: string;
  body: unknown;
}

/**
 * PUT /uploads/{fileId}: the bytes of a ticket. A forged, altered, expired or replayed ticket is
 * 400 40010; a Content-Type other than the ticket's, or bytes that are not of the announced kind,
 * 400 40011; more than `maxBytes` 413, counted while the bytes stream in. The ticket is used up
 * by the first request that gets past the signature, whatever happens to its bytes.
 */
export async function receiveUpload(ctx: Context, upload: IncomingUpload): Promise<{ fileId: string; size: number }> {
  const now = ctx.clock.now();
  if (!verifyUploadSignature(ctx.secret, upload.fileId, upload.expires, upload.sig, now))
    throw new ApiError('upload_ticket_invalid', { param: 'sig' });
  const row = await ctx.db.kysely.selectFrom('uploads').selectAll().where('id', '=', upload.fileId).executeTakeFirst();
  if (!row || row.state !== 'pending' || row.expires_at < now)
    throw new ApiError('upload_ticket_invalid', { param: 'sig' });
  if (normalizeType(upload.contentType ?? '') !== row.content_type)
    throw new ApiError('file_type_not_allowed', { param: 'Content-Type' });
  if (upload.contentLength !== undefined && Number(upload.contentLength) > row.max_bytes)
    throw new ApiError('payload_too_large', { param: 'Content-Length' });
  const claimed = await ctx.db.kysely
    .updateTable('uploads')
    .set({ state: 'receiving' })
    .where('id', '=', row.id)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  if (Number(claimed.numUpdatedRows) !== 1) throw new ApiError('upload_ticket_invalid', { param: 'sig' });
  const fail = () => ctx.db.kysely.updateTable('uploads').set({ state: 'failed' }).where('id', '=', row.id).execute();
  const body = requestChunks(upload.body);
  let size: number;
  let key: string;
  try {
    // The head tells the type before anything is stored; the rest streams to the blob store.
    const { head, rest } = await peek(body.chunks, (prefix) => Math.min(headWanted(prefix), row.max_bytes + 1));
    if (head.length > row.max_bytes) throw new BlobTooLargeError(row.max_bytes);
    const type = head.length ? await sniff(head) : undefined;
    if (!type || type.kind !== row.kind) throw new ApiError('file_type_not_allowed', { param: 'body' });
    key = ticketKeyOf(row.id);
    size = await ctx.blobs.put(key, rest, { maxBytes: row.max_bytes });
  } catch (error) {
    body.drain();
    await fail();
    if (error instanceof BlobTooLargeError) throw new ApiError('payload_too_large', { param: 'body' });
    throw error;
  }
  await ctx.db.kysely
    .updateTable('uploads')
    .set({ state: 'uploaded', received_bytes: size, blob_key: key, uploaded_at: ctx.clock.now() })
    .where('id', '=', row.id)
    .execute();
  return { fileId: row.id, size };
}

/** Where a ticket's bytes are received: never an asset's key (the commit copies them to one). */
function ticketKeyOf(fileId: string): string {
  return `uploads/${fileId}`;
}

/**
 * After a refusal, what a client may still send is read and dropped, up to this much and this long;
 * past either the connection is cut. Answering and closing at once (`Connection: close`) lost the
 * answer: the client was still writing, the server's close of a socket with unread bytes sends a
 * reset, and a reset makes the client's system drop the answer it had not read yet (EPIPE instead
 * of 413). This is the "lingering close" of RFC 9112 §9.6, bounded.
 */
const LINGER_BYTES = 64 * 1024 * 1024;
const LINGER_MS = 30_000;

/**
 * The chunks of a request body. Leaving the loop early (a refused upload) does not destroy the
 * request: `drain` then reads and drops the rest (within the bounds above), so the client hears
 * the answer (413, 400) and the connection stays usable when the body ends.
 */
function requestChunks(body: unknown): { chunks: AsyncIterable<Buffer>; drain(): void } {
  const stream = body as Readable | undefined;
  if (!stream || typeof stream.on !== 'function') return { chunks: (async function* () {})(), drain: () => {} };
  const chunks =
    typeof stream.iterator === 'function'
      ? stream.iterator({ destroyOnReturn: false })
      : (stream as AsyncIterable<Buffer>);
  return {
    chunks: chunks as AsyncIterable<Buffer>,
    drain: () => {
      if (stream.readableEnded || stream.destroyed) return;
      let dropped = 0;
      const cut = setTimeout(() => stream.destroy(), LINGER_MS).unref();
      // Read, not resume(): the abandoned iterator's 'readable' listener keeps the stream paused.
      const drop = () => {
        for (let chunk: Buffer | null = stream.read(); chunk !== null; chunk = stream.read()) {
          dropped += chunk.length;
          if (dropped > LINGER_BYTES) return void stream.destroy();
        }
      };
      stream.on('readable', drop);
      // Once the body has ended the connection is the client's again: the cut must not reach a later request.
      stream.once('end', () => clearTimeout(cut));
      stream.once('close', () => clearTimeout(cut));
      drop();
    },
  };
}

/** An upload of the owner's library; unknown and another library's are the same 404 (40403). */
async function uploadOfOwner(ctx: Context, owner: LibraryOwner, fileId: string): Promise<UploadRow> {
  const row = /^[A-Za-z0-9_-]{1,64}$/.test(fileId)
    ? await ctx.db.kysely
        .selectFrom('uploads')
        .selectAll()
        .where('id', '=', fileId)
        .where('account_id', '=', owner.accountId)
        .where('library', '=', owner.library)
        .executeTakeFirst()
    : undefined;
  if (!row) throw new ApiError('file_not_found', { param: 'fileId' });
  return row;
}

/**
 * POST /files/{fileId}/commit: probes the received bytes (type from the bytes, dimensions,
 * transparency, duration, fps) and stores the asset, if the plan has room. Committing again
 * returns the same asset.
 *
 * Final once committed: the asset's object is a copy of the received one under a key the ticket
 * never named (`library/<assetId>.<probed extension>`), and the ticket's object is deleted. A
 * presigned PUT stays valid for its whole life, and S3 has no conditional PUT (nor has s3rver),
 * so a client may write the ticket's key again after the commit: it then writes an object no asset
 * reads, deleted once more after the ticket expired (cleanup.ts). The asset's metadata and size
 * come from probing the copy, so they describe the bytes its media links serve.
 */
export async function commitUpload(
  ctx: Context,
  owner: LibraryOwner,
  fileId: string,
  name: string | undefined,
): Promise<AssetRow> {
  const upload = await uploadOfOwner(ctx, owner, fileId);
  if (upload.state === 'committed' && upload.asset_id) {
    const existing = await liveAssets(ctx.db.kysely, owner).where('id', '=', upload.asset_id).executeTakeFirst();
    if (existing) return existing;
    throw new ApiError('file_not_found', { param: 'fileId' });
  }
  const direct = upload.state === 'pending' && upload.blob_key !== null;
  if (direct) await receivedDirectly(ctx, upload);
  else if (upload.state !== 'uploaded' || !upload.blob_key)
    throw new ApiError('file_not_uploaded', { param: 'fileId' });
  const ticketKey = upload.blob_key!;
  const assetId = newId('a');
  const final = await copyReceived(ctx, upload, ticketKey, assetId, direct);
  // A concurrent commit of the same file won and deleted the ticket's object before this one copied it.
  if (!final) return committedMeanwhile(ctx, owner, fileId, name);
  const { probed, size, blobKey } = final;
  const row = assetRow(
    owner,
    { id: assetId, name: name ?? upload.file_name, probed, bytes: size, blobKey, source: 'upload' },
    ctx.clock.now(),
  );
  let committed = false;
  // The upload's own reservation becomes the asset: it is not counted twice.
  await insertWithRoom(
    ctx,
    owner,
    size,
    async (trx) => {
      const claimed = await trx
        .updateTable('uploads')
        .set({ state: 'committed', asset_id: row.id })
        .where('id', '=', upload.id)
        .where('state', '=', 'uploaded')
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) !== 1) return;
      await trx.insertInto('assets').values(row).execute();
      committed = true;
    },
    upload.id,
  ).catch(async (error) => {
    await ctx.blobs.delete(blobKey);
    throw error;
  });
  if (!committed) {
    // A concurrent commit of the same file won: its asset is the answer, this copy is nobody's.
    await ctx.blobs.delete(blobKey);
    return commitUpload(ctx, owner, fileId, name);
  }
  // The row keeps the ticket's key: cleanup deletes it again once the ticket has expired.
  await ctx.blobs.delete(ticketKey);
  return row;
}

/**
 * The received object copied to the asset's key and probed there. The extension is the probed
 * type's: a probe of the received object names it, and the copy must probe as the same format
 * and size (else the object was replaced during the commit: refused, as bytes of another kind).
 * Undefined when the received object is gone (a concurrent commit deleted it).
 */
async function copyReceived(
  ctx: Context,
  upload: UploadRow,
  ticketKey: string,
  assetId: string,
  direct: boolean,
): Promise<{ probed: Probed; size: number; blobKey: string } | undefined> {
  const received = await probeStored(ctx.blobs, ticketKey);
  if (!received) return undefined;
  if (!received.probed || received.probed.kind !== upload.kind) {
    if (direct) await refuseDirect(ctx, upload.id, ticketKey);
    throw new ApiError('file_type_not_allowed', { param: 'fileId' });
  }
  const blobKey = `library/${assetId}.${extensionOf(received.probed.format)}`;
  if ((await ctx.blobs.copy(ticketKey, blobKey)) === undefined) return undefined;
  const copied = await probeStored(ctx.blobs, blobKey);
  if (!copied?.probed || copied.probed.format !== received.probed.format || copied.size !== received.size) {
    await ctx.blobs.delete(blobKey);
    if (direct) await refuseDirect(ctx, upload.id, ticketKey);
    throw new ApiError('file_type_not_allowed', { param: 'fileId' });
  }
  return { probed: copied.probed, size: copied.size, blobKey };
}

/** The asset a concurrent commit made of the same file; not uploaded when there is none. */
async function committedMeanwhile(
  ctx: Context,
  owner: LibraryOwner,
  fileId: string,
  name: string | undefined,
): Promise<AssetRow> {
  const upload = await uploadOfOwner(ctx, owner, fileId);
  if (upload.state === 'committed') return commitUpload(ctx, owner, fileId, name);
  throw new ApiError('file_not_uploaded', { param: 'fileId' });
}

/**
 * The commit of a ticket whose bytes went straight to the store (a presigned PUT): the object must
 * be there, of the declared size (the store checked the signed length; a server that does not is
 * checked here), before the upload counts as received. A wrong size is refused and deleted.
 */
async function receivedDirectly(ctx: Context, upload: UploadRow): Promise<void> {
  const info = await ctx.blobs.stat(upload.blob_key!);
  if (!info) throw new ApiError('file_not_uploaded', { param: 'fileId' });
  if (info.size !== upload.declared_size) {
    await refuseDirect(ctx, upload.id, upload.blob_key!);
    throw info.size > upload.declared_size
      ? new ApiError('payload_too_large', { param: 'fileId' })
      : new ApiError('file_not_uploaded', { param: 'fileId' });
  }
  await ctx.db.kysely
    .updateTable('uploads')
    .set({ state: 'uploaded', received_bytes: info.size, uploaded_at: ctx.clock.now() })
    .where('id', '=', upload.id)
    .where('state', '=', 'pending')
    .execute();
}

/** A directly uploaded file the commit refused: the ticket is spent (its reservation released) and the object deleted from the store. */
async function refuseDirect(ctx: Context, uploadId: string, blobKey: string): Promise<void> {
  await ctx.db.kysely
    .updateTable('uploads')
    .set({ state: 'failed' })
    .where('id', '=', uploadId)
    .where('state', 'in', ['pending', 'uploaded'])
    .execute();
  await ctx.blobs.delete(blobKey);
}
