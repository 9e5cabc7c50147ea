import { createHash } from 'node:crypto';
import { signMediaPath } from '../blobs/blob-store.js';
import type { Context } from '../context.js';
import { ApiError, fieldIssue, invalidInput } from '../errors.js';
import { inputUploadKey } from '../tasks/input-uploads.js';
import { UPLOAD_LIMIT_BYTES } from './form.js';
import type { ReferenceSpec, ResolvedReference } from './video-request.js';
import { taskExists } from '../tasks/task-rows.js';

/** The image types a reference upload may have (the contract's encoding of input_reference), by magic bytes. */
export function sniffImage(bytes: Uint8Array): 'png' | 'jpg' | 'webp' | undefined {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return 'png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpg';
  if (b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return 'webp';
  return undefined;
}

/**
 * The reference image of a video about to be created: its signed absolute link, valid until the
 * task's deadline at least (the model reads it while the task runs), and the object to store.
 * Nothing is stored here: the route stores the object only once the request passed every check
 * before the hold, and removes it again when the request is refused (see createVideo).
 *
 * Interim: the upload does not become a `service://a/<asset_id>` library asset (whether it should
 * is open: the library is locked for accounts without purchases). The image is a blob under
 * `uploads/<task_id>.<ext>`, one object per task (deleted with it), and the model's input holds
 * the signed link. The link's expiry changes per request, so the idempotency fingerprint uses
 * `upload:<digest of the account and the bytes>` instead: a replay with the same image matches.
 * The link must be an https URL to pass the models' reference checks: the service's public URL
 * (MEDIAFORGE_PUBLIC_URL) has to be https for uploads to be accepted.
 */
export function prepareReferenceImage(
  ctx: Context,
  accountId: string,
  taskId: string,
  bytes: Uint8Array,
): ResolvedReference {
  if (bytes.byteLength > UPLOAD_LIMIT_BYTES) throw new ApiError('payload_too_large', { param: 'input_reference' });
  const extension = sniffImage(bytes);
  if (!extension) throw new ApiError('file_type_not_allowed', { param: 'input_reference' });
  const digest = createHash('sha256').update(accountId).update('\0').update(bytes).digest('base64url').slice(0, 32);
  const key = inputUploadKey(taskId, extension);
  const expiresAt = ctx.clock.now() + ctx.config.taskDeadlineMs + ctx.config.outputLinkTtlSeconds * 1000;
  return {
    url: `${ctx.config.publicUrl}${signMediaPath(ctx.secret, key, expiresAt)}`,
    stableToken: `upload:${digest}`,
    upload: { key, bytes },
  };
}

/** `data:image/png;base64,...` as the openai SDK documents for image_url. */
function decodeDataUrl(value: string): Buffer | undefined {
  const match = /^data:image\/[a-z0-9.+-]+;base64,([A-Za-z0-9+/=\s]*)$/i.exec(value);
  return match ? Buffer.from(match[1], 'base64') : undefined;
}

/** input_reference -> a URL the model accepts: uploaded file and data URL to be stored for `taskId`, file_id as service://a/<id>. */
export function resolveReference(
  ctx: Context,
  accountId: string,
  taskId: string,
  spec: ReferenceSpec,
  file: Uint8Array | undefined,
): ResolvedReference {
  if (spec.kind === 'upload') return prepareReferenceImage(ctx, accountId, taskId, file!);
  if (spec.kind === 'file_id')
    return { url: spec.value.startsWith('service://a/') ? spec.value : `service://a/${spec.value}` };
  if (spec.value.startsWith('data:')) {
    const bytes = decodeDataUrl(spec.value);
    if (!bytes) throw invalidInput([fieldIssue('input_reference.image_url', 'pattern', 'pattern')]);
    return prepareReferenceImage(ctx, accountId, taskId, bytes);
  }
  return { url: spec.value };
}

/**
 * After a refused or replayed request: its upload goes, unless the task it was stored for exists
 * (a create that committed and then failed to answer keeps its reference).
 */
export async function dropUnusedUpload(ctx: Context, taskId: string, key: string): Promise<void> {
  if (!(await taskExists(ctx.db.kysely, taskId))) await ctx.blobs.delete(key);
}
