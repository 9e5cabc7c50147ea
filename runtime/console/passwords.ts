import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { ApiError } from '../errors.js';
import { isLegacyHash, LegacyBcrypt } from './legacy-bcrypt.js';

/**
 * scrypt parameters of new hashes: N = 2^15, r = 8, p = 1 (32 MiB and roughly 100 ms each).
 * Each stored hash names its own parameters, so raising them later leaves old hashes verifiable.
 */
const N = 2 ** 15;
const R = 8;
const P = 1;
const KEY_BYTES = 32;
const SALT_BYTES = 16;
/** Node refuses scrypt above its default 32 MiB; the parameters above need 128 * N * r = 32 MiB plus a little. */
const maxmem = (n: number, r: number) => 128 * n * r + 16 * 1024 * 1024;

function derive(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  const options: ScryptOptions = { N: n, r, p, maxmem: maxmem(n, r) };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

/** `scrypt$N$r$p$salt$hash`, salt and hash in base64url. */
const SCRYPT_FORMAT = /^scrypt\$(\d{1,8})\$(\d{1,3})\$(\d{1,3})\$([A-Za-z0-9_-]{16,64})\$([A-Za-z0-9_-]{16,128})$/;

/**
 * Password hashing off the event loop: scrypt runs in libuv's thread pool, at most `concurrency`
 * at once (the pool also serves file and DNS work); up to `queue` more wait their turn and any
 * beyond are answered 429 (Retry-After: 1) at once, so a burst of sign-ins costs the API neither
 * event-loop time nor unbounded memory. Legacy bcrypt hashes verify in a worker thread.
 */
export class PasswordHasher {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private dummy?: Promise<string>;
  private readonly legacy = new LegacyBcrypt();

  constructor(
    private readonly concurrency: number,
    private readonly queue: number,
  ) {}

  async hash(password: string): Promise<string> {
    return this.bounded(async () => {
      const salt = randomBytes(SALT_BYTES);
      const key = await derive(password, salt, N, R, P);
      return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
    });
  }

  /** Whether `password` matches `stored` (scrypt, or a legacy bcrypt hash); compared in constant time. */
  async verify(password: string, stored: string): Promise<boolean> {
    return this.bounded(async () => {
      if (isLegacyHash(stored)) return this.legacy.compare(password, stored);
      const match = SCRYPT_FORMAT.exec(stored);
      if (!match) return false;
      const [, n, r, p, salt, hash] = match;
      const expected = Buffer.from(hash, 'base64url');
      const key = await derive(password, Buffer.from(salt, 'base64url'), Number(n), Number(r), Number(p));
      return key.length === expected.length && timingSafeEqual(key, expected);
    });
  }

  /** A stored hash that should be replaced at the next successful sign-in (bcrypt, or weaker scrypt parameters). */
  needsUpgrade(stored: string): boolean {
    return stored !== '' && !stored.startsWith(`scrypt$${N}$${R}$${P}$`);
  }

  /** A hash of no one's password: an unknown email costs the same verification as a known one. */
  dummyHash(): Promise<string> {
    if (!this.dummy) {
      this.dummy = this.hash(randomBytes(16).toString('base64url'));
      this.dummy.catch(() => (this.dummy = undefined)); // refused (queue full): made by a later sign-in
    }
    return this.dummy;
  }

  private async bounded<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.queue)
        throw new ApiError('rate_limited', { params: { retryAfter: 1 }, headers: { 'Retry-After': '1' } });
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else this.running += 1;
    try {
      return await work();
    } finally {
      // The slot passes straight to the next in line, or is freed.
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}
