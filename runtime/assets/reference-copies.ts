import { BlobTooLargeError } from '../blobs/blob-store.js';
import type { Context } from '../context.js';
import type { Db } from '../storage/dialect.js';
import { probeStored, type Probed } from '../files/probe.js';
import { FetchFailure, openCapped, type FailureReason, type FetchOptions } from '../files/remote-fetch.js';
import { extensionOf } from './library.js';

/**
 * The service's own copies of a task's external references (issue 37 point 3). The check lane
 * fetches each reference whole (capped like an upload), stores it, and measures the stored bytes;
 * the provider is then sent a signed link to that copy (runtime/worker/portable-input.ts), so the
 * provider, the limits and the bill all see the same bytes, whatever the customer's host serves
 * later. The copies live for the task's life: its content purge deletes them.
 */

/** A reference fetched whole, stored and probed: its copy's key and size, and what the probe found. */
export type StoredReference =
  | { ok: true; blobKey: string; bytes: number; probed: Probed | undefined }
  | { ok: false; reason: FailureReason; detail: string };

/** The key a copy is received under, before its type (and so its extension) is known. */
function incomingKey(taskId: string, index: number): string {
  return `references/${taskId}/${index}.incoming`;
}

/**
 * Fetches `url` once through the outbound guard and stores the whole answer as the copy of the
 * task's reference number `index`: first under a key without a type, then, probed, under a key
 * with the probed type's extension (what the media route serves it as). Nothing stays behind
 * when the fetch fails or passes `maxBytes`.
 */
export async function storeReferenceCopy(
  ctx: Context,
  taskId: string,
  index: number,
  url: string,
  options: FetchOptions,
): Promise<StoredReference> {
  const opened = await openCapped(url, options);
  if (!opened.ok) return opened;
  const incoming = incomingKey(taskId, index);
  try {
    await ctx.blobs.put(incoming, opened.body, { maxBytes: options.maxBytes });
  } catch (error) {
    if (error instanceof FetchFailure) return { ok: false, reason: error.reason, detail: error.detail };
    if (error instanceof BlobTooLargeError)
      return { ok: false, reason: 'too_large', detail: `more than ${options.maxBytes} bytes` };
    return { ok: false, reason: 'network', detail: (error as Error).message };
  } finally {
    opened.close();
  }
  try {
    const received = await probeStored(ctx.blobs, incoming);
    if (!received) return { ok: false, reason: 'network', detail: 'the stored copy vanished' };
    const extension = received.probed ? extensionOf(received.probed.format) : 'bin';
    const blobKey = `references/${taskId}/${index}.${extension}`;
    const bytes = await ctx.blobs.copy(incoming, blobKey);
    if (bytes === undefined) return { ok: false, reason: 'network', detail: 'the stored copy vanished' };
    return { ok: true, blobKey, bytes, probed: received.probed };
  } finally {
    await ctx.blobs.delete(incoming);
  }
}

/** Records the copies of a task's references (a check taken again after a crash writes the same rows again). */
export async function keepReferenceCopies(
  ctx: Context,
  taskId: string,
  copies: { path: string; blobKey: string; bytes: number }[],
): Promise<void> {
  if (copies.length === 0) return;
  const now = ctx.clock.now();
  await ctx.db.kysely
    .insertInto('reference_copies')
    .values(
      copies.map((c) => ({ task_id: taskId, path: c.path, blob_key: c.blobKey, bytes: c.bytes, created_at: now })),
    )
    .onConflict((oc) =>
      oc
        .columns(['task_id', 'path'])
        .doUpdateSet((eb) => ({ blob_key: eb.ref('excluded.blob_key'), bytes: eb.ref('excluded.bytes') })),
    )
    .execute();
}

/** The stored copies of a task's references, by field path. */
export async function referenceCopiesOf(ctx: Context, taskId: string): Promise<Map<string, string>> {
  const rows = await ctx.db.kysely
    .selectFrom('reference_copies')
    .select(['path', 'blob_key'])
    .where('task_id', '=', taskId)
    .execute();
  return new Map(rows.map((r) => [r.path, r.blob_key]));
}

/** Deletes a task's copies, objects first (a crash in between leaves rows whose objects are gone: deleting again is harmless). */
export async function purgeReferenceCopies(ctx: Context, taskId: string): Promise<void> {
  const copies = await referenceCopiesOf(ctx, taskId);
  if (copies.size === 0) return;
  for (const key of copies.values()) await ctx.blobs.delete(key);
  await ctx.db.kysely.deleteFrom('reference_copies').where('task_id', '=', taskId).execute();
}

/** How many copies the store holds and their bytes, over all tasks not yet purged (the operator's /metrics). */
export async function referenceCopyTotals(db: Db['kysely']): Promise<{ copies: number; bytes: number }> {
  const row = await db
    .selectFrom('reference_copies')
    .select((eb) => [eb.fn.countAll<number>().as('copies'), eb.fn.sum<number>('bytes').as('bytes')])
    .executeTakeFirst();
  return { copies: Number(row?.copies ?? 0), bytes: Number(row?.bytes ?? 0) };
}
