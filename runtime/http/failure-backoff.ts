import type { Redis } from 'ioredis';

export interface BackoffPolicy {
  /** Failures of one subject before it is locked out. */
  failuresBeforeLockout: number;
  /** The first lockout; each further failure doubles it, up to lockoutMaxMs. */
  lockoutMs: number;
  lockoutMaxMs: number;
}

/** How long failures are remembered after the last one (or after the lockout it started ends). */
const MEMORY_MS = 15 * 60_000;
/** Subjects the in-process store keeps; the oldest go first beyond it (the per-address limits bound how fast anyone adds new ones). */
const LOCAL_CAPACITY = 100_000;

/**
 * Failed attempts per subject (a hashed, normalized email) with an increasing lockout: after N
 * failures the subject is refused for lockoutMs, after each further failure for twice as long.
 * A success forgets the subject. In Redis when configured (every API process sees one count),
 * in this process otherwise.
 */
export interface FailureBackoff {
  /** Milliseconds until the subject may try again; 0 when it is not locked out. */
  lockedFor(subject: string, now: number): Promise<number>;
  /** Records one failure; returns the lockout it starts (0 for none). */
  fail(subject: string, now: number): Promise<number>;
  reset(subject: string): Promise<void>;
}

export function lockoutAfter(failures: number, policy: BackoffPolicy): number {
  if (failures < policy.failuresBeforeLockout) return 0;
  return Math.min(policy.lockoutMs * 2 ** Math.min(failures - policy.failuresBeforeLockout, 40), policy.lockoutMaxMs);
}

export function failureBackoff(policy: BackoffPolicy, redis: Redis | undefined, nameSpace: string): FailureBackoff {
  return redis ? new RedisBackoff(policy, redis, nameSpace) : new LocalBackoff(policy);
}

class LocalBackoff implements FailureBackoff {
  private readonly subjects = new Map<string, { failures: number; lockedUntil: number; forgetAt: number }>();
  constructor(private readonly policy: BackoffPolicy) {}

  async lockedFor(subject: string, now: number): Promise<number> {
    const entry = this.subjects.get(subject);
    if (!entry || entry.forgetAt <= now) return 0;
    return Math.max(0, entry.lockedUntil - now);
  }

  async fail(subject: string, now: number): Promise<number> {
    let entry = this.subjects.get(subject);
    if (!entry || entry.forgetAt <= now) entry = { failures: 0, lockedUntil: 0, forgetAt: 0 };
    entry.failures += 1;
    const lockout = lockoutAfter(entry.failures, this.policy);
    if (lockout > 0) entry.lockedUntil = now + lockout;
    entry.forgetAt = Math.max(entry.lockedUntil, now) + MEMORY_MS;
    // Re-inserted so that the Map's order is the order of last failure (the oldest are dropped first).
    this.subjects.delete(subject);
    this.subjects.set(subject, entry);
    if (this.subjects.size > LOCAL_CAPACITY) this.trim(now);
    return lockout;
  }

  async reset(subject: string): Promise<void> {
    this.subjects.delete(subject);
  }

  private trim(now: number): void {
    for (const [subject, entry] of this.subjects) if (entry.forgetAt <= now) this.subjects.delete(subject);
    for (const subject of this.subjects.keys()) {
      if (this.subjects.size <= LOCAL_CAPACITY) break;
      this.subjects.delete(subject);
    }
  }
}

/** One hash per subject: f (failures), u (locked until, ms); it expires MEMORY_MS after the lockout ends. */
const FAIL_SCRIPT = `
local failures = redis.call('HINCRBY', KEYS[1], 'f', 1)
local now = tonumber(ARGV[1])
local threshold = tonumber(ARGV[2])
local lockout = 0
if failures >= threshold then
  lockout = math.min(tonumber(ARGV[3]) * 2 ^ math.min(failures - threshold, 40), tonumber(ARGV[4]))
  redis.call('HSET', KEYS[1], 'u', string.format('%d', now + lockout))
end
redis.call('PEXPIRE', KEYS[1], string.format('%d', lockout + tonumber(ARGV[5])))
return string.format('%d', lockout)
`;

type BackoffRedis = Redis & {
  mediaforgeBackoffFail(
    key: string,
    now: number,
    threshold: number,
    lockoutMs: number,
    lockoutMaxMs: number,
    memoryMs: number,
  ): Promise<string>;
};

class RedisBackoff implements FailureBackoff {
  private readonly redis: BackoffRedis;
  constructor(
    private readonly policy: BackoffPolicy,
    redis: Redis,
    private readonly nameSpace: string,
  ) {
    if (!('mediaforgeBackoffFail' in redis))
      redis.defineCommand('mediaforgeBackoffFail', { numberOfKeys: 1, lua: FAIL_SCRIPT });
    this.redis = redis as BackoffRedis;
  }

  async lockedFor(subject: string, now: number): Promise<number> {
    const until = await this.redis.hget(this.nameSpace + subject, 'u');
    return until ? Math.max(0, Number(until) - now) : 0;
  }

  async fail(subject: string, now: number): Promise<number> {
    const { failuresBeforeLockout, lockoutMs, lockoutMaxMs } = this.policy;
    return Number(
      await this.redis.mediaforgeBackoffFail(
        this.nameSpace + subject,
        now,
        failuresBeforeLockout,
        lockoutMs,
        lockoutMaxMs,
        MEMORY_MS,
      ),
    );
  }

  async reset(subject: string): Promise<void> {
    await this.redis.del(this.nameSpace + subject);
  }
}
