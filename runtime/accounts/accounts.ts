import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../storage/dialect.js';
import { newId } from '../ids.js';
import { addGrant, openWallet } from '../ledger/credits.js';
import type { Credited, Ledger, PurchaseOrigin } from '../ledger/ledger.js';
import { ledgerFor } from '../ledger/ledger-for.js';
import { KEY_REVISION_SETTING, type KeyRevision, recordKeyRevocation } from './key-revision.js';
import type { Executor, Trx } from '../storage/executor.js';
import {
  KEY_POLICY_COLUMNS,
  type KeyPolicy,
  type KeyPolicyColumns,
  NO_POLICY,
  policyOfRow,
  rowOfPolicy,
} from './key-policy.js';

export const KEY_PREFIX = 'sk-service-';

/**
 * API keys are 192-bit random secrets, so a fast SHA-256 digest is the right store (a password
 * hash would only slow every request); the key itself is shown once and never stored.
 */
export function hashKey(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex');
}

function newApiKey(): string {
  return `${KEY_PREFIX}${randomBytes(24).toString('base64url')}`;
}

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export interface CreatedAccount {
  accountId: string;
  apiKey: string;
  webhookSecret: string;
}

export interface NewAccountOptions {
  credits: number;
  language?: string | null;
  now: number;
}

/**
 * The rows of a new account inside the caller's transaction: account, wallet, purchase and, unless
 * `firstKey` is false (console API accounts get their keys from the console), a first personal key.
 */
export async function insertAccount(
  trx: Trx,
  options: NewAccountOptions & { firstKey: boolean },
): Promise<Omit<CreatedAccount, 'apiKey'> & { apiKey?: string }> {
  const accountId = newId('acct');
  const webhookSecret = newWebhookSecret();
  await trx
    .insertInto('accounts')
    .values({
      id: accountId,
      created_at: options.now,
      language: options.language ?? null,
      webhook_secret: webhookSecret,
      payload_version: 2,
    })
    .execute();
  await openWallet(trx, accountId);
  if (options.credits > 0) await addGrant(trx, accountId, options.credits, options.now);
  if (!options.firstKey) return { accountId, webhookSecret };
  const apiKey = newApiKey();
  await trx
    .insertInto('api_keys')
    .values({
      id: newId('key'),
      account_id: accountId,
      key_hash: hashKey(apiKey),
      key_prefix: apiKey.slice(0, 16),
      workspace: 'personal',
      created_at: options.now,
      revoked_at: null,
    })
    .execute();
  return { accountId, apiKey, webhookSecret };
}

export async function createAccount(db: Db, options: NewAccountOptions): Promise<CreatedAccount> {
  const created = await db.kysely.transaction().execute((trx) => insertAccount(trx, { ...options, firstKey: true }));
  return { ...created, apiKey: created.apiKey! };
}

/** A sibling key of an account: personal, or for a team workspace (`team:NAME`). */
export async function createKey(
  db: Db,
  accountId: string,
  workspace: string,
  now: number,
  policy: KeyPolicy = NO_POLICY,
): Promise<{ apiKey: string; keyId: string }> {
  return db.kysely.transaction().execute((trx) => createKeyIn(trx, accountId, workspace, now, policy));
}

/** createKey in `trx`: the caller writes its audit row in the same transaction (operator-actions.ts createKeyAsActor). */
export async function createKeyIn(
  trx: Executor,
  accountId: string,
  workspace: string,
  now: number,
  policy: KeyPolicy = NO_POLICY,
): Promise<{ apiKey: string; keyId: string }> {
  const account = await trx.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
  if (!account) throw new Error(`no account ${accountId}`);
  if (workspace !== 'personal' && !/^team:[A-Za-z0-9_.-]{1,64}$/.test(workspace))
    throw new Error('workspace must be "personal" or team:NAME');
  const apiKey = newApiKey();
  const keyId = newId('key');
  await trx
    .insertInto('api_keys')
    .values({
      id: keyId,
      account_id: accountId,
      key_hash: hashKey(apiKey),
      key_prefix: apiKey.slice(0, 16),
      workspace,
      created_at: now,
      revoked_at: null,
      ...rowOfPolicy(policy),
    })
    .execute();
  return { apiKey, keyId };
}

/** A key's policy (undefined: no such key). */
export async function keyPolicyOf(
  db: Executor,
  keyId: string,
): Promise<{ accountId: string; policy: KeyPolicy } | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .select(['account_id', ...KEY_POLICY_COLUMNS])
    .where('id', '=', keyId)
    .executeTakeFirst();
  return row && { accountId: row.account_id, policy: policyOfRow(row) };
}

/**
 * Replaces a key's policy in `trx`, a transaction of `db` (the caller writes its audit row in the same
 * one); false for an unknown key. The key revision moves as for a revocation, so every process
 * drops its cached callers and applies the new policy from its next request on.
 */
export async function setKeyPolicyIn(db: Db, trx: Trx, keyId: string, policy: KeyPolicy): Promise<boolean> {
  const result = await trx.updateTable('api_keys').set(rowOfPolicy(policy)).where('id', '=', keyId).executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) return false;
  await recordKeyRevocation(db, trx);
  return true;
}

/** Revokes a key; every process refuses it from its next request on (runtime/accounts/key-revision.ts). */
export async function revokeKey(db: Db, keyId: string, now: number): Promise<boolean> {
  return db.kysely.transaction().execute((trx) => revokeKeyIn(db, trx, keyId, now));
}

/** Revokes a key in `trx`, a transaction of `db` (an operator's revocation writes its audit row in the same one); false when already revoked or unknown. */
export async function revokeKeyIn(db: Db, trx: Trx, keyId: string, now: number): Promise<boolean> {
  const result = await trx
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) return false;
  await recordKeyRevocation(db, trx);
  return true;
}

/** The account a key belongs to, or undefined for an unknown key. */
export async function accountOfKey(db: Executor, keyId: string): Promise<string | undefined> {
  return (await db.selectFrom('api_keys').select('account_id').where('id', '=', keyId).executeTakeFirst())?.account_id;
}

/** Accounts whose id starts with `idPrefix` (or all, newest first), with when they were made: the operator's search. */
export async function accountsByIdPrefix(db: Executor, idPrefix: string, limit: number) {
  return (
    db
      .selectFrom('accounts')
      .select(['id', 'created_at'])
      // A comparison of the id's start, not LIKE: every id has `_`, a LIKE wildcard (stripping it found nothing).
      .where(sql<boolean>`substr(id, 1, ${idPrefix.length}) = ${idPrefix}`)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute()
  );
}

/** The accounts of these ids that exist, with when they were made. */
export async function accountsByIds(db: Executor, ids: readonly string[]) {
  if (ids.length === 0) return [];
  return db
    .selectFrom('accounts')
    .select(['id', 'created_at'])
    .where('id', 'in', [...ids])
    .execute();
}

/** The account's keys with their policy columns, oldest first (hashes stay here: the prefix identifies a key to people). */
export async function keysOfAccount(db: Db, accountId: string) {
  return db.kysely
    .selectFrom('api_keys')
    .select(['id', 'key_prefix', 'workspace', 'created_at', 'revoked_at', ...KEY_POLICY_COLUMNS])
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** Whether the key belongs to the account (another account's key is as an unknown one). */
export async function isKeyOfAccount(db: Db, accountId: string, keyId: string): Promise<boolean> {
  return (
    (await db.kysely
      .selectFrom('api_keys')
      .select('id')
      .where('id', '=', keyId)
      .where('account_id', '=', accountId)
      .executeTakeFirst()) !== undefined
  );
}

/** The account's first key (the playground account has exactly one, never shown). */
export async function firstKeyOfAccount(db: Db, accountId: string): Promise<string> {
  return (
    await db.kysely
      .selectFrom('api_keys')
      .select('id')
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .executeTakeFirstOrThrow()
  ).id;
}

export async function addCredits(db: Db, accountId: string, credits: number, now: number): Promise<void> {
  await db.kysely.transaction().execute(async (trx) => {
    await addCreditsIn(ledgerFor(db), trx, accountId, credits, now);
  });
}

/** The one top-up path of an operator (the CLI's `credits add`, a grant with its note): a `grant` row in `trx`. */
export async function addCreditsIn(
  ledger: Ledger,
  trx: Trx,
  accountId: string,
  credits: number,
  now: number,
  origin?: PurchaseOrigin,
): Promise<Credited> {
  if (!Number.isSafeInteger(credits) || credits <= 0) throw new Error('credits must be a positive whole number');
  if (!(await ledger.hasWallet(trx, accountId))) throw new Error(`no account ${accountId}`);
  return ledger.grant(trx, accountId, credits, now, origin);
}

export interface Caller {
  keyId: string;
  accountId: string;
  workspace: string;
  language: string | null;
  /** The key's policy (key-policy.ts), read with the key: checked at authentication and acceptance. */
  policy: KeyPolicy;
  /** The account's price book (spec/price-books/; null: the published catalogue), read with the key: reassigning moves the key revision. */
  priceBook: string | null;
}

export async function findCaller(db: Db, apiKey: string): Promise<Caller | undefined> {
  const row = await db.kysely
    .selectFrom('api_keys')
    .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
    .select([
      'api_keys.id as keyId',
      'api_keys.account_id as accountId',
      'api_keys.workspace',
      'accounts.language',
      'accounts.price_book',
      'api_keys.revoked_at',
      ...KEY_POLICY_COLUMNS.map((c) => `api_keys.${c}` as const),
    ])
    .where('api_keys.key_hash', '=', hashKey(apiKey))
    .executeTakeFirst();
  if (!row || row.revoked_at !== null) return undefined;
  return {
    keyId: row.keyId,
    accountId: row.accountId,
    workspace: row.workspace,
    language: row.language,
    policy: policyOfRow(row),
    priceBook: row.price_book,
  };
}

/** A key's caller (undefined: unknown or revoked) and the key revision it was read at. */
export interface CallerAtRevision {
  caller: Caller | undefined;
  revision: string;
}

/**
 * The caller of a key with the key revision, for the authentication cache: on PostgreSQL in one
 * statement (one round trip, not two); on SQLite the revision is the connection's own check
 * (key-revision.ts), taken before the key is read so that a revocation in between is not missed.
 */
export async function findCallerAtRevision(
  db: Db,
  keyRevision: KeyRevision,
  apiKey: string,
): Promise<CallerAtRevision> {
  if (!db.pg) {
    const revision = await keyRevision.current();
    return { caller: await findCaller(db, apiKey), revision };
  }
  const { rows } = await db.pg.query<
    {
      revision: string | null;
      keyId: string | null;
      accountId: string | null;
      workspace: string | null;
      language: string | null;
      price_book: string | null;
      revoked_at: number | null;
    } & KeyPolicyColumns
  >({
    name: 'caller-at-key-revision',
    text: `SELECT (SELECT value FROM settings WHERE key = $1) AS revision,
        k.id AS "keyId", k.account_id AS "accountId", k.workspace, a.language, a.price_book, k.revoked_at,
        ${KEY_POLICY_COLUMNS.map((c) => `k.${c}`).join(', ')}
      FROM (VALUES (1)) AS one
      LEFT JOIN api_keys k ON k.key_hash = $2
      LEFT JOIN accounts a ON a.id = k.account_id`,
    values: [KEY_REVISION_SETTING, hashKey(apiKey)],
  });
  const row = rows[0];
  const caller =
    row?.keyId && row.accountId && row.workspace !== null && row.revoked_at === null
      ? {
          keyId: row.keyId,
          accountId: row.accountId,
          workspace: row.workspace,
          language: row.language,
          policy: policyOfRow(row),
          priceBook: row.price_book,
        }
      : undefined;
  return { caller, revision: row?.revision ?? '' };
}
