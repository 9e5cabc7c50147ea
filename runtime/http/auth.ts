import type { FastifyRequest } from 'fastify';
import { findCallerAtRevision, KEY_PREFIX, type Caller } from '../accounts/accounts.js';
import { NO_POLICY, refuseAtAuthentication } from '../accounts/key-policy.js';
import type { Context } from '../context.js';
import { ApiError } from '../errors.js';

const KEY_LIKE_PARAMS = new Set([
  'api_key',
  'apikey',
  'api-key',
  'key',
  'token',
  'access_token',
  'authorization',
  'bearer',
]);
const CACHE_MS = 5_000;

/** Keys are never taken from the URL: a key-like query parameter is refused even if the key is valid. */
export function refuseKeyInQuery(request: FastifyRequest): void {
  const query = request.query as Record<string, unknown>;
  for (const [name, value] of Object.entries(query ?? {})) {
    const values = Array.isArray(value) ? value : [value];
    if (
      KEY_LIKE_PARAMS.has(name.toLowerCase()) ||
      values.some((v) => typeof v === 'string' && v.includes(KEY_PREFIX))
    ) {
      throw new ApiError('key_in_query');
    }
  }
}

/**
 * Bearer keys, looked up by hash; a short cache keeps the lookup off the hot path. The cache is
 * dropped whenever the key revision moves (a revocation in any process), so a revoked key is
 * refused from the next request on; its lifetime only bounds other changes (an account's language).
 */
export class Authenticator {
  private readonly cache = new Map<string, { caller: Caller | undefined; until: number }>();
  private revision = '';
  /** Moves with every drop of the cache: a lookup that overlapped one is answered but not kept. */
  private generation = 0;
  constructor(private readonly ctx: Context) {}

  async authenticate(request: FastifyRequest): Promise<Caller> {
    const header = request.headers.authorization;
    // The scheme is case-insensitive and followed by one or more spaces (RFC 9110, section 11).
    const match = typeof header === 'string' ? /^bearer +(\S+)$/i.exec(header.trim()) : null;
    if (!match || !match[1].startsWith(KEY_PREFIX) || match[1].length > 200) throw new ApiError('unauthorized');
    const key = match[1];
    const now = Date.now();
    const cached = this.cache.get(key);
    if (cached && cached.until > now) {
      // SQLite answers the revision without a promise (key-revision.ts): no turn of the microtask queue.
      const current = this.ctx.keyRevision.current();
      const revision = typeof current === 'string' ? current : await current;
      if (revision === this.revision) return this.admitted(request, cached.caller);
      this.drop(revision);
    }
    const generation = this.generation;
    const { caller, revision } = await findCallerAtRevision(this.ctx.db, this.ctx.keyRevision, key);
    if (generation === this.generation) {
      // Nothing was dropped meanwhile, so this revision is the newest seen.
      if (revision !== this.revision) this.drop(revision);
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(key, { caller, until: now + CACHE_MS });
    }
    return this.admitted(request, caller);
  }

  /** A known key, within its policy's expiry and networks (checked on every request: the cache keeps the policy, not the verdict). */
  private admitted(request: FastifyRequest, caller: Caller | undefined): Caller {
    if (!caller) throw new ApiError('unauthorized');
    if (caller.policy !== NO_POLICY) refuseAtAuthentication(caller.policy, this.ctx.clock.now(), request.ip);
    return caller;
  }

  private drop(revision: string): void {
    this.cache.clear();
    this.revision = revision;
    this.generation++;
  }
}
