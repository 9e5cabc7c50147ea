import type { Selectable, Transaction } from 'kysely';
import { storagePlanFor, type StoragePlan } from '../../generated/storage-plans.js';
import type { Context } from '../context.js';
import { ApiError } from '../errors.js';
import type { Database } from '../storage/schema.js';
import type { LibraryOwner } from './library.js';

type Db = Context['db']['kysely'] | Transaction<Database>;

export interface StorageState {
  plan: StoragePlan;
  lifetimePurchasedCredits: number;
  usedBytes: number;
  assetCount: number;
}

/**
 * The plan of a library (from the account owner's lifetime purchases, tiers in
 * spec/storage-plans.yaml) and what its live assets use. Each library (personal, each team
 * workspace) has the plan's limit to itself.
 */
export async function storageState(db: Db, owner: LibraryOwner): Promise<StorageState> {
  const wallet = await db.selectFrom('wallets').select('purchased').where('account_id', '=', owner.planAccountId ?? owner.accountId).executeTakeFirst();
  const usage = await db
    .selectFrom('assets')
    .select((eb) => [eb.fn.coalesce(eb.fn.sum<number>('bytes'), eb.lit(0)).as('used'), eb.fn.countAll<number>().as('count')])
    .where('account_id', '=', owner.accountId)
    .where('library', '=', owner.library)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  const purchased = Number(wallet?.purchased ?? 0);
  return { plan: storagePlanFor(purchased), lifetimePurchasedCredits: purchased, usedBytes: Number(usage.used), assetCount: Number(usage.count) };
}

/** 403 40302 while storage is locked; 403 40303 when `bytes` more would pass the plan's limit. */
export function checkRoom(state: StorageState, bytes: number): void {
  if (state.plan.limitBytes <= 0) throw new ApiError('storage_locked');
  if (state.usedBytes + bytes > state.plan.limitBytes) throw new ApiError('storage_full');
}

/** Locked storage refuses before any bytes are taken (ticket, import). */
export async function ensureUnlocked(ctx: Context, owner: LibraryOwner, bytes = 0): Promise<void> {
  checkRoom(await storageState(ctx.db.kysely, owner), bytes);
}

/**
 * Stores a new asset row only if the library has room for it, in one transaction. On PostgreSQL
 * the account's wallet row is locked first, so two concurrent commits of one account cannot both
 * take the last free bytes; SQLite transactions are serialized already.
 */
export async function insertWithRoom(ctx: Context, owner: LibraryOwner, bytes: number, write: (trx: Transaction<Database>) => Promise<void>): Promise<void> {
  await ctx.db.kysely.transaction().execute(async (trx) => {
    if (ctx.db.engine === 'postgres') await trx.selectFrom('wallets').select('account_id').where('account_id', '=', owner.accountId).forUpdate().execute();
    checkRoom(await storageState(trx, owner), bytes);
    await write(trx);
  });
}

/** GET /assets/usage. */
export async function usageReport(ctx: Context, owner: LibraryOwner) {
  const state = await storageState(ctx.db.kysely, owner);
  return {
    plan: state.plan.name,
    unlocked: state.plan.limitBytes > 0,
    usedBytes: state.usedBytes,
    limitBytes: state.plan.limitBytes,
    assetCount: state.assetCount,
    lifetimePurchasedCredits: state.lifetimePurchasedCredits,
    library: owner.library,
  };
}

/**
 * Stores a new asset's bytes, then its row where the library has room; the bytes are removed
 * again when the row cannot be written (locked, full), so nothing is left behind.
 */
export async function storeNewAsset(ctx: Context, owner: LibraryOwner, row: Selectable<Database['assets']>, bytes: Uint8Array): Promise<void> {
  await ctx.blobs.put(row.blob_key, bytes);
  try {
    await insertWithRoom(ctx, owner, row.bytes, async (trx) => {
      await trx.insertInto('assets').values(row).execute();
    });
  } catch (error) {
    await ctx.blobs.delete(row.blob_key);
    throw error;
  }
}
