import { newWebhookSecret } from '../accounts/accounts.js';
import { matchLanguage } from '../language.js';
import { newId } from '../ids.js';
import { checkUrlShape, hostIsAllowed, type OutboundPolicy } from '../net/address-policy.js';
import type { Db } from '../storage/dialect.js';
import { parseEvents } from './events.js';
import { newEndpointSecret } from './signing.js';
import { consoleRefusal } from '../console-refusal.js';
import { scheduleWork } from '../queue/schedule-work.js';

/**
 * What the console (the CLI and the console pages) does with webhooks. Refusals are console
 * refusals (runtime/console-refusal.ts): an English detail for the operator and a business code of
 * spec/errors.yaml the pages answer in the user's language.
 */

/** After an endpoint's secret is rotated, the previous one is still signed with for this long. */
export const ENDPOINT_ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

async function requireAccount(db: Db, accountId: string): Promise<void> {
  const account = await db.kysely.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
  if (!account) throw consoleRefusal('not_found', `no account ${accountId}`);
}

/** The callback URL rules apply to endpoints too: shape, then every address the host resolves to. */
export async function checkEndpointUrl(url: string, policy: OutboundPolicy): Promise<void> {
  const shape = checkUrlShape(url, policy);
  if (typeof shape === 'string')
    throw consoleRefusal(
      'invalid_url',
      `invalid endpoint URL (${shape}): public https on port 443, no user or password`,
    );
  if (url.length > 2048) throw consoleRefusal('invalid_url', 'invalid endpoint URL (longer than 2048 characters)');
  if (!(await hostIsAllowed(shape.hostname, policy)))
    throw consoleRefusal('invalid_url', 'invalid endpoint URL (the host does not resolve only to public addresses)');
}

/** Registers an endpoint; its `whsec_` secret is returned here once. */
export async function addEndpoint(
  db: Db,
  input: { accountId: string; url: string; events: string; policy: OutboundPolicy; now: number },
): Promise<{ endpointId: string; secret: string; events: string[] }> {
  await requireAccount(db, input.accountId);
  let events: string[];
  try {
    events = parseEvents(input.events);
  } catch (error) {
    throw consoleRefusal('invalid_events', (error as Error).message);
  }
  await checkEndpointUrl(input.url, input.policy);
  const endpointId = newId('whe');
  const secret = newEndpointSecret();
  await db.kysely
    .insertInto('webhook_endpoints')
    .values({
      id: endpointId,
      account_id: input.accountId,
      url: input.url,
      events: events.join(','),
      secret,
      previous_secret: null,
      previous_until: null,
      created_at: input.now,
      disabled_at: null,
    })
    .execute();
  return { endpointId, secret, events };
}

/** An instant as ISO 8601; a column that may be empty stays null. */
function iso(ms: number): string;
function iso(ms: number | null): string | null;
function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** Whether the endpoint belongs to the account (another account's is as an unknown one). */
export async function isEndpointOfAccount(db: Db, accountId: string, endpointId: string): Promise<boolean> {
  return (
    (await db.kysely
      .selectFrom('webhook_endpoints')
      .select('id')
      .where('id', '=', endpointId)
      .where('account_id', '=', accountId)
      .executeTakeFirst()) !== undefined
  );
}

/** Whether the delivery belongs to the account. */
export async function isDeliveryOfAccount(db: Db, accountId: string, deliveryId: string): Promise<boolean> {
  return (
    (await db.kysely
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('id', '=', deliveryId)
      .where('account_id', '=', accountId)
      .executeTakeFirst()) !== undefined
  );
}

/** The account's endpoints, oldest first, without their secrets. */
export async function listEndpoints(db: Db, accountId: string, now: number) {
  await requireAccount(db, accountId);
  const rows = await db.kysely
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    endpointId: row.id,
    url: row.url,
    events: row.events.split(','),
    enabled: row.disabled_at === null,
    createdAt: iso(row.created_at),
    disabledAt: iso(row.disabled_at),
    previousSecretValidUntil: row.previous_until !== null && row.previous_until > now ? iso(row.previous_until) : null,
  }));
}

export async function disableEndpoint(db: Db, accountId: string, endpointId: string, now: number): Promise<boolean> {
  const result = await db.kysely
    .updateTable('webhook_endpoints')
    .set({ disabled_at: now })
    .where('id', '=', endpointId)
    .where('account_id', '=', accountId)
    .where('disabled_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Sends to a disabled endpoint again, for events of tasks that end from now on (nothing missed meanwhile is sent). */
export async function enableEndpoint(db: Db, accountId: string, endpointId: string): Promise<boolean> {
  const result = await db.kysely
    .updateTable('webhook_endpoints')
    .set({ disabled_at: null })
    .where('id', '=', endpointId)
    .where('account_id', '=', accountId)
    .where('disabled_at', 'is not', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Removes an endpoint and its secrets. Its deliveries stay in the log (evidence of what was sent);
 * one still pending fails at its next attempt, as for a disabled endpoint.
 */
export async function deleteEndpoint(db: Db, accountId: string, endpointId: string): Promise<boolean> {
  const result = await db.kysely
    .deleteFrom('webhook_endpoints')
    .where('id', '=', endpointId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/** A new account webhook signing secret (the task-callback secret); it takes effect at once, for retries too. */
export async function rotateAccountSecret(db: Db, accountId: string): Promise<string> {
  await requireAccount(db, accountId);
  const secret = newWebhookSecret();
  await db.kysely.updateTable('accounts').set({ webhook_secret: secret }).where('id', '=', accountId).execute();
  return secret;
}

/**
 * A new secret for one endpoint. It signs from now on; the one it replaces keeps signing beside it
 * (a second signature in `webhook-signature`) for 24 hours, so receivers can switch without a gap.
 */
export async function rotateEndpointSecret(
  db: Db,
  accountId: string,
  endpointId: string,
  now: number,
): Promise<{ endpointId: string; secret: string; previousValidUntil: string }> {
  const endpoint = await db.kysely
    .selectFrom('webhook_endpoints')
    .select(['id', 'secret'])
    .where('id', '=', endpointId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  if (!endpoint) throw consoleRefusal('not_found', `no endpoint ${endpointId} on account ${accountId}`);
  const secret = newEndpointSecret();
  const previousUntil = now + ENDPOINT_ROTATION_OVERLAP_MS;
  await db.kysely
    .updateTable('webhook_endpoints')
    .set({ secret, previous_secret: endpoint.secret, previous_until: previousUntil })
    .where('id', '=', endpointId)
    .execute();
  return { endpointId, secret, previousValidUntil: new Date(previousUntil).toISOString() };
}

/** The account's deliveries, newest first. */
export async function listDeliveries(db: Db, accountId: string, limit = 50) {
  await requireAccount(db, accountId);
  const rows = await db.kysely
    .selectFrom('webhook_deliveries')
    .select([
      'id',
      'task_id',
      'kind',
      'endpoint_id',
      'event_type',
      'url',
      'state',
      'attempts',
      'last_status',
      'last_error',
      'next_attempt_at',
      'created_at',
      'delivered_at',
    ])
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    deliveryId: row.id,
    taskId: row.task_id,
    kind: row.kind,
    endpointId: row.endpoint_id,
    event: row.event_type,
    url: row.url,
    state: row.state,
    attempts: row.attempts,
    lastStatus: row.last_status,
    lastError: row.last_error,
    nextAttemptAt: row.state === 'pending' ? iso(row.next_attempt_at) : null,
    createdAt: iso(row.created_at),
    deliveredAt: iso(row.delivered_at),
  }));
}

/**
 * Sends a finished (failed or delivered) delivery again, by hand: same delivery id and body, signed
 * afresh at each attempt, with a new retry schedule of eight attempts.
 */
export async function resendDelivery(
  db: Db,
  deliveryId: string,
  now: number,
): Promise<{ deliveryId: string; state: 'pending' }> {
  await db.kysely.transaction().execute(async (trx) => {
    const delivery = await trx
      .selectFrom('webhook_deliveries')
      .select(['id', 'state', 'task_id'])
      .where('id', '=', deliveryId)
      .executeTakeFirst();
    if (!delivery) throw consoleRefusal('not_found', `no delivery ${deliveryId}`);
    if (delivery.state === 'pending')
      throw consoleRefusal('still_pending', `delivery ${deliveryId} is still pending; it is attempted on its schedule`);
    const result = await trx
      .updateTable('webhook_deliveries')
      .set({ state: 'pending', round_attempts: 0, next_attempt_at: now, delivered_at: null })
      .where('id', '=', deliveryId)
      .where('state', '=', delivery.state)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1)
      throw consoleRefusal('invalid_request', `delivery ${deliveryId} changed meanwhile; try again`);
    await scheduleWork(trx, now, { kind: 'deliver', taskId: delivery.task_id, refId: deliveryId, dueAt: now });
  });
  return { deliveryId, state: 'pending' };
}

/**
 * The account settings webhooks read: the language of their texts, the task callback payload
 * version and the low-balance alert's threshold (`account.balance_low`; null: no alert).
 */
export async function setAccountWebhookSettings(
  db: Db,
  accountId: string,
  settings: { language?: string | null; payloadVersion?: number; lowBalanceCredits?: number | null },
): Promise<void> {
  await requireAccount(db, accountId);
  if (settings.language && !matchLanguage(settings.language))
    throw consoleRefusal('invalid_request', `unsupported language ${settings.language}`);
  if (settings.payloadVersion !== undefined && settings.payloadVersion !== 1 && settings.payloadVersion !== 2)
    throw consoleRefusal('invalid_request', '--payload-version must be 1 or 2');
  const low = settings.lowBalanceCredits;
  if (low !== undefined && low !== null && (!Number.isSafeInteger(low) || low < 1))
    throw consoleRefusal('invalid_request', '--low-balance must be a whole number of credits >= 1, or off');
  const changes: { language?: string | null; payload_version?: number; low_balance_credits?: number | null } = {};
  if (settings.language !== undefined) changes.language = settings.language;
  if (settings.payloadVersion !== undefined) changes.payload_version = settings.payloadVersion;
  if (low !== undefined) changes.low_balance_credits = low;
  if (Object.keys(changes).length === 0)
    throw consoleRefusal(
      'invalid_request',
      'nothing to set: give --language, --payload-version, --low-balance and/or --price-book',
    );
  await db.kysely.updateTable('accounts').set(changes).where('id', '=', accountId).execute();
}

/** The account's low-balance alert threshold (null: none): the console's banner and settings. */
export async function lowBalanceThreshold(db: Db, accountId: string): Promise<number | null> {
  const row = await db.kysely
    .selectFrom('accounts')
    .select('low_balance_credits')
    .where('id', '=', accountId)
    .executeTakeFirst();
  return row?.low_balance_credits == null ? null : Number(row.low_balance_credits);
}
