import { createHash } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Caller } from '../accounts/accounts.js';
import type { Context } from '../context.js';
import { ApiError } from '../errors.js';
import { type Authenticator, refuseKeyInQuery } from './auth.js';
import { keptClientAddresses } from './client-address.js';
import { failureBackoff } from './failure-backoff.js';

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 3600 * 1000;
/** Buckets an in-process limiter keeps (the plugin's default of 5,000 would let a caller with many keys or addresses evict others' counts). */
const LOCAL_CACHE = 100_000;

declare module 'fastify' {
  interface FastifyRequest {
    /** The bucket the rate-limit check being made counts (registerRateLimits' `count`); unset for the global hook. */
    rateLimitBucket?: string;
  }
}

type Check = ReturnType<FastifyInstance['createRateLimit']>;
type CheckResult = Awaited<ReturnType<Check>>;

/**
 * The service's rate limits (@fastify/rate-limit, shared through Redis when MEDIAFORGE_REDIS is
 * set). Buckets are never keyed on a raw header value:
 * - routes that need an API key: one bucket per key id, counted after authentication; a request
 *   that fails authentication (or puts a key in the URL) counts against its client address instead,
 *   and an address past that limit is refused before its keys are even looked up;
 * - every other route (sign-in, sign-up, uploads, media links, console pages, docs, ops): per
 *   client address (an IPv4 address or an IPv6 /64);
 * - console sign-in additionally per address (signInPerAddressPerMinute) and per email and
 *   address (a lockout after signInFailuresBeforeLockout failures that doubles with each further
 *   one; a success clears it): whoever fails on purpose from their addresses locks those out, not
 *   the email's owner at another; sign-up per address and day (signUpsPerAddressPerDay), each
 *   attempt counted.
 */
export interface RateLimits {
  /** Authenticates a request to a route that needs a key, counting it in the right bucket; 401/400/429. */
  authenticate(request: FastifyRequest, reply: FastifyReply): Promise<Caller>;
  /** Counts a sign-in attempt for its address and refuses an email locked out at that address (429 with Retry-After). */
  admitSignIn(request: FastifyRequest, reply: FastifyReply, email: string): Promise<void>;
  signInFailed(request: FastifyRequest, email: string): Promise<void>;
  signInSucceeded(request: FastifyRequest, email: string): Promise<void>;
  /** Counts a sign-up attempt (a possible playground grant) for its address; 429 past the day's limit. */
  admitSignUp(request: FastifyRequest, reply: FastifyReply): Promise<void>;
}

export async function registerRateLimits(
  app: FastifyInstance,
  ctx: Context,
  authenticator: Authenticator,
): Promise<RateLimits> {
  const config = ctx.config;
  // Shared across API processes through Redis when configured; per process otherwise. ioredis is
  // loaded only then: a service without Redis (most of them, and every test's) never reads it.
  const redis = config.redisUrl
    ? new (await import('ioredis')).Redis(config.redisUrl, {
        connectTimeout: 1000,
        maxRetriesPerRequest: 1,
        lazyConnect: false,
      })
    : undefined;
  if (redis) app.addHook('onClose', async () => void (await redis.quit()));
  const nameSpace = 'mediaforge-rate-limit-';
  // The bucket a check counts: the plugin calls keyGenerator with the request alone, so `count`
  // notes on the request which bucket it means; the global hook (nothing noted) counts the client
  // address. A decorated property (set on every request, so requests keep one shape) costs less
  // per request than a WeakMap entry.
  app.decorateRequest('rateLimitBucket', undefined);
  const clientAddress = keptClientAddresses();
  const bucketOf = (request: FastifyRequest): string => request.rateLimitBucket ?? `addr:${clientAddress(request.ip)}`;
  await app.register(rateLimit, {
    // Every route counts per client address, except those that name `config: { rateLimit: false }`
    // (the routes that need a key: RateLimits.authenticate counts them).
    global: true,
    ...(redis ? { redis, nameSpace } : {}),
    cache: LOCAL_CACHE,
    max: config.rateLimitPerMinute,
    timeWindow: MINUTE_MS,
    keyGenerator: bucketOf,
    errorResponseBuilder: (_request, context) =>
      new ApiError('rate_limited', { params: { retryAfter: Math.ceil(context.ttl / 1000) } }),
  });

  // Every limiter below shares the store's name space: the bucket names carry their kind.
  const limiter = (max: number, timeWindow: number) =>
    app.createRateLimit({ max, timeWindow, cache: LOCAL_CACHE } as Parameters<FastifyInstance['createRateLimit']>[0]);
  const perKey = limiter(config.rateLimitPerMinute, MINUTE_MS);
  const failedAuth = limiter(config.rateLimitPerMinute, MINUTE_MS);
  const signIns = limiter(config.signInPerAddressPerMinute, MINUTE_MS);
  const signUps = limiter(config.signUpsPerAddressPerDay, DAY_MS);
  const emails = failureBackoff(
    {
      failuresBeforeLockout: config.signInFailuresBeforeLockout,
      lockoutMs: config.signInLockoutSeconds * 1000,
      lockoutMaxMs: config.signInLockoutMaxSeconds * 1000,
    },
    redis,
    `${nameSpace}signin-email:`,
  );

  const address = (request: FastifyRequest) => clientAddress(request.ip);
  const count = async (check: Check, request: FastifyRequest, bucket: string, increment = true) => {
    request.rateLimitBucket = bucket;
    return check(request, { increment });
  };

  return {
    async authenticate(request, reply) {
      const addressBucket = `authfail:${address(request)}`;
      // An address that has used up its failures is refused before any key is looked up, so that
      // guessing keys learns nothing more until its window ends.
      refuseIfExceeded(reply, await count(failedAuth, request, addressBucket, false), false);
      let caller: Caller;
      try {
        refuseKeyInQuery(request);
        caller = await authenticator.authenticate(request);
      } catch (error) {
        if (error instanceof ApiError) refuseIfExceeded(reply, await count(failedAuth, request, addressBucket), true);
        throw error;
      }
      refuseIfExceeded(reply, await count(perKey, request, `key:${caller.keyId}`), true);
      return caller;
    },

    async admitSignIn(request, reply, email) {
      refuseIfExceeded(reply, await count(signIns, request, `signin:${address(request)}`), true);
      const lockedFor = await emails.lockedFor(signInSubject(email, address(request)), Date.now());
      if (lockedFor > 0) throw tooMany(reply, Math.ceil(lockedFor / 1000));
    },
    async signInFailed(request, email) {
      await emails.fail(signInSubject(email, address(request)), Date.now());
    },
    async signInSucceeded(request, email) {
      await emails.reset(signInSubject(email, address(request)));
    },

    async admitSignUp(request, reply) {
      refuseIfExceeded(reply, await count(signUps, request, `signup:${address(request)}`), true);
    },
  };
}

/**
 * What a sign-in lockout counts: one email from one client address (an IPv4 address or an IPv6
 * /64). Emails are normalized as at sign-up and hashed: no email is kept in the limiter's store.
 */
function signInSubject(email: string, address: string): string {
  return `${createHash('sha256').update(email.trim().toLowerCase()).digest('base64url')}@${address}`;
}

function tooMany(reply: FastifyReply, retryAfter: number): ApiError {
  const seconds = String(Math.max(1, retryAfter));
  reply.header('Retry-After', seconds);
  return new ApiError('rate_limited', { params: { retryAfter: seconds }, headers: { 'Retry-After': seconds } });
}

/** The X-RateLimit-* headers of a counted request, and 429 once its bucket is past the limit. */
function refuseIfExceeded(reply: FastifyReply, result: CheckResult, setHeaders: boolean): void {
  if (result.isAllowed) return;
  const exceeded = result.isExceeded;
  if (setHeaders || exceeded) {
    reply.header('X-RateLimit-Limit', result.max);
    reply.header('X-RateLimit-Remaining', exceeded ? 0 : result.remaining);
    reply.header('X-RateLimit-Reset', result.ttlInSeconds);
  }
  if (exceeded) throw tooMany(reply, result.ttlInSeconds);
}
