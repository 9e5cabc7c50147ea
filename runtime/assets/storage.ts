import type { Selectable } from 'kysely';
import type { BlobSource, PutOptions } from '../blobs/blob-store.js';
import {
  PLAYGROUND_STORAGE_BYTES,
  STORAGE_UNLOCK_CREDITS,
  storagePlanFor,
  type StoragePlan,
} from '../../generated/storage-plans.js';
import type { Context } from '../context.js';
import { ApiError } from '../errors.js';
import type { Executor, Trx } from '../storage/executor.js';
import { purchasedCredits } from '../ledger/wallets.js';
import type { Database } from '../storage/schema.js';
import type { LibraryOwner } from './library.js';

type Db = Executor;

export interface StorageState {
  plan: StoragePlan;
  lifetimePurchasedCredits: number;
  /** Live assets' bytes plus `reservedBytes`. */
  usedBytes: number;
  /** Bytes held by uploads not committed yet (see `reservedBytes`). */
  reservedBytes: number;
  assetCount: number;
}

/**
 * The plan of a library (from the account owner's lifetime purchases, tiers in
 * spec/storage-plans.yaml) and what it uses: its live assets and its uploads' reservations. Each
 * library (personal, each team workspace) has the plan's limit to itself. `exceptUpload`: the
 * upload being committed, whose reservation becomes the asset.
 */
export async function storageState(
  db: Db,
  owner: LibraryOwner,
  now: number,
  exceptUpload?: string,
): Promise<StorageState> {
  const usage = await db
    .selectFrom('assets')
    .select((eb) => [
      eb.fn.coalesce(eb.fn.sum<number>('bytes'), eb.lit(0)).as('used'),
      eb.fn.countAll<number>().as('count'),
    ])
    .where('account_id', '=', owner.accountId)
    .where('library', '=', owner.library)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  const reserved = await reservedBytes(db, owner, now, exceptUpload);
  const purchased = await purchasedCredits(db, owner.planAccountId ?? owner.accountId);
  const own = storagePlanFor(purchased);
  return {
    plan:
      owner.playground && own.limitBytes < PLAYGROUND_STORAGE_BYTES
        ? { name: 'playground', minPurchasedCredits: 0, limitBytes: PLAYGROUND_STORAGE_BYTES }
        : own,
    lifetimePurchasedCredits: purchased,
    usedBytes: Number(usage.used) + reserved,
    reservedBytes: reserved,
    assetCount: Number(usage.count),
  };
}

/**
 * What a library's uploads hold until they become assets: a ticket not used yet (pending) or being
 * received reserves its declared size until the ticket expires; received bytes not committed yet
 * count until they are committed or the cleanup removes them (runtime/files/cleanup.ts), as they
 * can still be committed until then. Failed uploads keep nothing (their bytes are never stored).
 */
async function reservedBytes(
  db: Db,
  owner: LibraryOwner,
  now: number,
  exceptUpload: string | undefined,
): Promise<number> {
  let query = db
    .selectFrom('uploads')
    .select((eb) =>
      eb.fn
        .coalesce(
          eb.fn.sum<number>(
            eb
              .case()
              .when('state', '=', 'uploaded')
              .then(eb.fn.coalesce('received_bytes', 'declared_size'))
              .when(eb.and([eb('state', 'in', ['pending', 'receiving']), eb('expires_at', '>=', now)]))
              .then(eb.ref('declared_size'))
              .else(eb.lit(0))
              .end(),
          ),
          eb.lit(0),
        )
        .as('reserved'),
    )
    .where('account_id', '=', owner.accountId)
    .where('library', '=', owner.library)
    .where('state', 'in', ['pending', 'receiving', 'uploaded']);
  if (exceptUpload !== undefined) query = query.where('id', '!=', exceptUpload);
  return Number((await query.executeTakeFirstOrThrow()).reserved);
}

/**
 * 403 40302 while storage is locked (the message names the lifetime purchases that unlock it and the
 * account's so far); 403 40303 when `bytes` more would pass the plan's limit.
 */
export function checkRoom(state: StorageState, bytes: number): void {
  if (state.plan.limitBytes <= 0)
    throw new ApiError('storage_locked', {
      params: {
        threshold: STORAGE_UNLOCK_CREDITS,
        purchased: state.lifetimePurchasedCredits,
      },
    });
  if (state.usedBytes + bytes > state.plan.limitBytes) throw new ApiError('storage_full');
}

/** Locked storage refuses before any bytes are taken (ticket, import). */
export async function ensureUnlocked(ctx: Context, owner: LibraryOwner, bytes = 0): Promise<void> {
  checkRoom(await storageState(ctx.db.kysely, owner, ctx.clock.now()), bytes);
}

/**
 * Writes a new asset row (or an upload ticket's reservation) only if the library has room for
 * `bytes` more, in one transaction. On PostgreSQL the account's wallet row is locked first, so two
 * concurrent commits or tickets of one account cannot both take the last free bytes; SQLite
 * transactions are serialized already. `exceptUpload`: the upload whose reservation `bytes` replaces.
 */
export async function insertWithRoom(
  ctx: Context,
  owner: LibraryOwner,
  bytes: number,
  write: (trx: Trx) => Promise<void>,
  exceptUpload?: string,
): Promise<void> {
  await ctx.db.kysely.transaction().execute(async (trx) => {
    await ctx.ledger.lockWallet(trx, owner.accountId);
    checkRoom(await storageState(trx, owner, ctx.clock.now(), exceptUpload), bytes);
    await write(trx);
  });
}

/** GET /assets/usage. */
export async function usageReport(ctx: Context, owner: LibraryOwner) {
  const state = await storageState(ctx.db.kysely, owner, ctx.clock.now());
  return {
    plan: state.plan.name,
    unlocked: state.plan.limitBytes > 0,
    usedBytes: state.usedBytes,
    reservedBytes: state.reservedBytes,
    limitBytes: state.plan.limitBytes,
    assetCount: state.assetCount,
    lifetimePurchasedCredits: state.lifetimePurchasedCredits,
    library: owner.library,
  };
}

/**
 * Stores a new asset's bytes (a buffer or a stream, written as it is read), then its row where
 * the library has room; the bytes are removed again when the row cannot be written (locked,
 * full), so nothing is left behind. `row.bytes` is set from what was stored.
 */
export async function storeNewAsset(
  ctx: Context,
  owner: LibraryOwner,
  row: Selectable<Database['assets']>,
  bytes: BlobSource,
  options: PutOptions = {},
): Promise<void> {
  row.bytes = await ctx.blobs.put(row.blob_key, bytes, options);
  try {
    await insertWithRoom(ctx, owner, row.bytes, async (trx) => {
      await trx.insertInto('assets').values(row).execute();
    });
  } catch (error) {
    await ctx.blobs.delete(row.blob_key);
    throw error;
  }
}
