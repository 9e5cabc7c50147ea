/**
 * The ceiling of issue 30: what Fastify + better-sqlite3 allow for recordInfo and quote, as a
 * process of its own (spawned by bench/ceiling.ts beside the service, on the service's SQLite file,
 * read-only). It does each route's work and nothing else:
 *   - the Bearer key looked up by its hash (one prepared read), cached 5 s as the service caches it,
 *     with no key-revision read;
 *   - recordInfo: one prepared read of the task (by id and key), the record built by the service's
 *     own taskRecord (signed links where the task has outputs), the envelope;
 *   - quote: the generated validator and the generated price of the model (generated/validators/,
 *     generated/prices.ts), the request fingerprint, one prepared read of the wallet (the balance
 *     check), a signed quote id, the envelope.
 * Its answers have the service's shape and size; its headers are Fastify's own plus content-type,
 * Cache-Control on recordInfo and X-Request-Id (the service sends about 20). No logger, no hooks.
 * Env: PORT, DB_FILE (the service's SQLite file), SECRET (the service's), PUBLIC_URL.
 */
import Database from 'better-sqlite3';
import { NO_POLICY } from '../runtime/accounts/key-policy.js';
import Fastify, { type FastifyReply } from 'fastify';
import { prices } from '../generated/prices.js';
import { creditsToUsd } from '../generated/support.js';
import { validators } from '../generated/validators/index.js';
import { hashKey, KEY_PREFIX, type Caller } from '../runtime/accounts/accounts.js';
import type { Context } from '../runtime/context.js';
import { requestFingerprint } from '../runtime/idempotency/fingerprint.js';
import { newId } from '../runtime/ids.js';
import { QUOTE_TTL_MS, signQuote } from '../runtime/quotes/quotes.js';
import { taskRecord, type TaskRow } from '../runtime/tasks/task-record.js';

const port = Number(process.env.PORT);
const secret = process.env.SECRET ?? '';
const db = new Database(process.env.DB_FILE ?? '', { readonly: true, fileMustExist: true });
const keyByHash = db.prepare(
  `SELECT api_keys.id AS keyId, api_keys.account_id AS accountId, api_keys.workspace AS workspace,
          accounts.language AS language, api_keys.revoked_at AS revokedAt
     FROM api_keys JOIN accounts ON accounts.id = api_keys.account_id WHERE api_keys.key_hash = ?`,
);
const taskOfKey = db.prepare('SELECT * FROM tasks WHERE id = ? AND api_key_id = ?');
const walletOf = db.prepare('SELECT available FROM wallets WHERE account_id = ?');

/** What taskRecord reads of the service's context: its link settings, secret and clock. */
const recordContext = {
  config: { publicUrl: process.env.PUBLIC_URL ?? `http://127.0.0.1:${port}`, outputLinkTtlSeconds: 20 * 60 },
  secret,
  clock: { now: () => Date.now() },
} as unknown as Context;

const CACHE_MS = 5_000;
const callers = new Map<string, { caller: Caller | undefined; until: number }>();

function callerOf(header: string | undefined): Caller | undefined {
  const key = typeof header === 'string' ? /^bearer +(\S+)$/i.exec(header.trim())?.[1] : undefined;
  if (!key?.startsWith(KEY_PREFIX)) return undefined;
  const now = Date.now();
  const cached = callers.get(key);
  if (cached !== undefined && cached.until > now) return cached.caller;
  const row = keyByHash.get(hashKey(key)) as (Caller & { revokedAt: number | null }) | undefined;
  const caller =
    row && row.revokedAt === null
      ? {
          keyId: row.keyId,
          accountId: row.accountId,
          workspace: row.workspace,
          language: row.language,
          policy: NO_POLICY,
          priceBook: null,
        }
      : undefined;
  callers.set(key, { caller, until: now + CACHE_MS });
  return caller;
}

function answer(reply: FastifyReply, status: number, requestId: string, data: unknown, msg = 'success') {
  reply.code(status).header('x-request-id', requestId);
  return { code: status, msg, data, request_id: requestId };
}

const app = Fastify({ logger: false, genReqId: () => newId('req') });

app.get('/healthz', async () => ({ ok: true }));

app.get<{ Querystring: { taskId?: string } }>('/api/v1/jobs/recordInfo', async (request, reply) => {
  const caller = callerOf(request.headers.authorization);
  if (!caller) return answer(reply, 401, request.id, null, 'unauthorized');
  const row = taskOfKey.get(request.query.taskId ?? '', caller.keyId) as TaskRow | undefined;
  if (!row) return answer(reply, 404, request.id, null, 'task not found');
  reply.header('cache-control', 'no-store');
  return answer(reply, 200, request.id, taskRecord(recordContext, row, 'en'));
});

app.post<{ Body: { model?: unknown; input?: unknown } }>('/api/v1/jobs/quote', async (request, reply) => {
  const caller = callerOf(request.headers.authorization);
  if (!caller) return answer(reply, 401, request.id, null, 'unauthorized');
  const { model, input } = request.body ?? {};
  const validate = typeof model === 'string' ? validators.get(model) : undefined;
  const price = typeof model === 'string' ? prices.get(model) : undefined;
  if (!validate || !price || typeof model !== 'string') return answer(reply, 422, request.id, null, 'unknown model');
  const validated = validate(input);
  if (!validated.ok) return answer(reply, 422, request.id, validated.errors, 'invalid input');
  const priced = price(validated.value, {});
  const fingerprint = requestFingerprint(model, validated.value, null);
  const wallet = walletOf.get(caller.accountId) as { available: number } | undefined;
  if (!wallet || wallet.available < priced.maxCredits)
    return answer(reply, 402, request.id, null, 'insufficient credits');
  const expiresAt = Date.now() + QUOTE_TTL_MS;
  const quoteId = signQuote(secret, {
    accountId: caller.accountId,
    keyId: caller.keyId,
    fingerprint,
    estimatedCredits: priced.estimatedCredits,
    maxCredits: priced.maxCredits,
    expiresAt,
  });
  return answer(reply, 200, request.id, {
    quoteId,
    expiresAt: new Date(expiresAt).toISOString(),
    model,
    estimatedCredits: priced.estimatedCredits,
    estimatedCost: creditsToUsd(priced.estimatedCredits),
    maxCredits: priced.maxCredits,
    maxCharge: creditsToUsd(priced.maxCredits),
    breakdown: {
      rate: priced.rate,
      rateHundredths: priced.rateHundredths,
      billableSeconds: priced.billableSeconds,
      maxBillableSeconds: priced.maxBillableSeconds,
      options: priced.options,
    },
    warnings: [],
  });
});

await app.listen({ port, host: '127.0.0.1' });
