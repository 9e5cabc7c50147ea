import type { Selectable } from 'kysely';
import type { Caller } from '../accounts/accounts.js';
import { signMediaPath } from '../blobs/blob-store.js';
import type { Context } from '../context.js';
import { ApiError } from '../errors.js';
import { decodeCursor, keysetAfter, pageOf } from '../storage/cursor.js';
import type { AssetKind, Probed } from '../files/probe.js';
import type { Executor } from '../storage/executor.js';
import type { Database } from '../storage/schema.js';

export type AssetRow = Selectable<Database['assets']>;

/**
 * Whose library a request reaches: the account and the key's workspace. A personal key reaches
 * the personal library, a team workspace key (`team:NAME`) that team's library, nothing else.
 */
export interface LibraryOwner {
  accountId: string;
  library: string;
  /**
   * The account whose lifetime purchases set the storage plan, when it is not `accountId`: a
   * console user's playground library follows the user's own purchases (its 30 free credits are a
   * grant, not a purchase).
   */
  planAccountId?: string;
  /** A console user's playground library: it has at least the playground's allowance (PLAYGROUND_STORAGE_BYTES) whatever the plan. */
  playground?: boolean;
}

export function ownerOf(caller: Pick<Caller, 'accountId' | 'workspace'>): LibraryOwner {
  return { accountId: caller.accountId, library: caller.workspace };
}

export const ASSET_URI_PREFIX = 'service://a/';

export function assetUri(assetId: string): string {
  return `${ASSET_URI_PREFIX}${assetId}`;
}

/** The asset id of a `service://a/<id>` reference, or undefined for anything else. */
export function assetIdOf(value: unknown): string | undefined {
  return typeof value === 'string' && value.startsWith(ASSET_URI_PREFIX)
    ? value.slice(ASSET_URI_PREFIX.length)
    : undefined;
}

/** Extension of an object key by format (the media route answers the content type from it). */
export function extensionOf(format: string): string {
  return format === 'jpeg' ? 'jpg' : format;
}

/** Kinds whose preview is worth a link; LoRA weights and documents get none. */
const PREVIEWED = new Set<AssetKind>(['image', 'video', 'audio']);

/** The Asset of the contract. The preview is a short private signed link; there are no public links. */
export function toAsset(ctx: Context, row: AssetRow) {
  const expiresAt = ctx.clock.now() + ctx.config.previewLinkTtlSeconds * 1000;
  return {
    assetId: row.id,
    uri: assetUri(row.id),
    name: row.name,
    kind: row.kind,
    mime: row.mime,
    format: row.format,
    bytes: row.bytes,
    ...(row.width !== null ? { width: row.width } : {}),
    ...(row.height !== null ? { height: row.height } : {}),
    ...(row.has_alpha !== null ? { hasAlpha: row.has_alpha === 1 } : {}),
    ...(row.duration_seconds !== null ? { durationSeconds: row.duration_seconds } : {}),
    ...(row.fps !== null ? { fps: row.fps } : {}),
    source: row.source,
    createdAt: new Date(row.created_at).toISOString(),
    preview: PREVIEWED.has(row.kind)
      ? `${ctx.config.publicUrl}${signMediaPath(ctx.secret, row.blob_key, expiresAt)}`
      : null,
    previewExpiresAt: PREVIEWED.has(row.kind) ? new Date(expiresAt).toISOString() : null,
  };
}

/** One live asset of the owner's library; unknown, deleted and another library's are the same 404 (40402). */
export async function assetOfOwner(
  ctx: Context,
  owner: LibraryOwner,
  assetId: string,
  param = 'assetId',
): Promise<AssetRow> {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(assetId)) throw new ApiError('asset_not_found', { param });
  const row = await liveAssets(ctx.db.kysely, owner).where('id', '=', assetId).executeTakeFirst();
  if (!row) throw new ApiError('asset_not_found', { param });
  return row;
}

type Db = Executor;

export function liveAssets(db: Db, owner: LibraryOwner) {
  return db
    .selectFrom('assets')
    .selectAll()
    .where('account_id', '=', owner.accountId)
    .where('library', '=', owner.library)
    .where('deleted_at', 'is', null);
}

export interface NewAsset {
  id: string;
  name: string;
  probed: Probed;
  bytes: number;
  blobKey: string;
  source: 'upload' | 'import' | 'task';
  sourceTaskId?: string;
}

export function assetRow(owner: LibraryOwner, asset: NewAsset, now: number): AssetRow {
  const p = asset.probed;
  return {
    id: asset.id,
    account_id: owner.accountId,
    library: owner.library,
    name: asset.name,
    kind: p.kind,
    mime: p.mime,
    format: p.format,
    bytes: asset.bytes,
    width: p.width ?? null,
    height: p.height ?? null,
    has_alpha: p.hasAlpha === undefined ? null : p.hasAlpha ? 1 : 0,
    duration_seconds: p.durationSeconds ?? null,
    fps: p.fps ?? null,
    blob_key: asset.blobKey,
    source: asset.source,
    source_task_id: asset.sourceTaskId ?? null,
    created_at: now,
    deleted_at: null,
  };
}

/** Changes a live asset's display name (its uri stays). */
export async function renameAsset(db: Db, assetId: string, name: string): Promise<void> {
  await db.updateTable('assets').set({ name }).where('id', '=', assetId).where('deleted_at', 'is', null).execute();
}

/** The library's assets, newest first, with an opaque cursor (created_at, id). */
export async function listLibrary(
  ctx: Context,
  owner: LibraryOwner,
  query: { cursor?: string; limit: number; kind?: string },
) {
  let q = liveAssets(ctx.db.kysely, owner);
  if (query.kind) q = q.where('kind', '=', query.kind as AssetKind);
  if (query.cursor) {
    const [createdAt, id] = decodeCursor(query.cursor);
    q = q.where((eb) => keysetAfter(eb, { createdAt, id }));
  }
  const rows = await q
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(query.limit + 1)
    .execute();
  return pageOf(rows, query.limit);
}

/**
 * Deletes an asset: the row is marked deleted (its `service://` URI stops resolving at once), the
 * stored file is removed, and characters built from it go with it (they would no longer have
 * their images).
 */
export async function deleteAssetOfOwner(ctx: Context, owner: LibraryOwner, assetId: string): Promise<void> {
  const row = await assetOfOwner(ctx, owner, assetId);
  const now = ctx.clock.now();
  await ctx.db.kysely.transaction().execute(async (trx) => {
    await trx
      .updateTable('assets')
      .set({ deleted_at: now })
      .where('id', '=', row.id)
      .where('deleted_at', 'is', null)
      .execute();
    const entities = await trx
      .selectFrom('entities')
      .select(['id', 'asset_ids'])
      .where('account_id', '=', owner.accountId)
      .where('library', '=', owner.library)
      .where('deleted_at', 'is', null)
      .execute();
    const affected = entities.filter((e) => (JSON.parse(e.asset_ids) as string[]).includes(row.id)).map((e) => e.id);
    if (affected.length)
      await trx.updateTable('entities').set({ deleted_at: now }).where('id', 'in', affected).execute();
  });
  await ctx.blobs.delete(row.blob_key);
}
