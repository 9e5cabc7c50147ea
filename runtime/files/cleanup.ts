import type { Context } from '../context.js';
import type { WorkHandler } from '../queue/work-handler.js';

const HOUR_MS = 3600 * 1000;
/** An upload that was never committed keeps its bytes this long after its ticket expired. */
export const UPLOAD_GRACE_MS = 24 * HOUR_MS;

/**
 * Recurring maintenance: tickets never used and uploads never committed are marked expired a day
 * after the ticket ran out, and their bytes are deleted; so are the leftovers of blob writes that
 * a crash cut short, and shared copies no object names any more (BlobStore.putShared), a day old.
 * A committed upload's ticket key is deleted again once its ticket has expired (uploads.ts).
 * The state changes first (a commit racing with it then finds the file not uploaded), the objects
 * go after.
 */
export const expireUploads: WorkHandler = async (ctx: Context) => {
  const now = ctx.clock.now();
  const stale = await ctx.db.kysely
    .updateTable('uploads')
    .set({ state: 'expired' })
    .where('state', 'in', ['pending', 'receiving', 'uploaded', 'failed'])
    .where('expires_at', '<', now - UPLOAD_GRACE_MS)
    .returning(['id', 'blob_key'])
    .execute();
  for (const row of stale) if (row.blob_key) await ctx.blobs.delete(row.blob_key);
  await deleteSpentTicketKeys(ctx, now);
  // Writes a crash cut short (temporary files, chunk rows no object points at) go after the same grace.
  await ctx.blobs.sweepAbandoned(UPLOAD_GRACE_MS);
  return { retryAt: now + HOUR_MS };
};

/**
 * A committed upload's ticket key, deleted at the commit, may have been written again through its
 * presigned PUT until the ticket expired (runtime/files/uploads.ts): deleted once more, then forgotten.
 */
export async function deleteSpentTicketKeys(ctx: Context, now: number): Promise<void> {
  const spent = await ctx.db.kysely
    .selectFrom('uploads')
    .select(['id', 'blob_key'])
    .where('state', '=', 'committed')
    .where('blob_key', 'is not', null)
    .where('expires_at', '<', now)
    .execute();
  for (const row of spent) {
    await ctx.blobs.delete(row.blob_key!);
    await ctx.db.kysely.updateTable('uploads').set({ blob_key: null }).where('id', '=', row.id).execute();
  }
}
