import { randomFillSync } from 'node:crypto';

// One call to the system's random source per 4 KiB instead of one per id: ids are made on every
// request (request ids), and a small randomBytes() call costs more than the rest of newId.
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let offset = POOL_BYTES;

/** Random identifiers with a readable prefix: task_, acct_, key_, req_, dlv_, a_ ... */
export function newId(prefix: string, bytes = 12): string {
  return `${prefix}_${randomText(bytes)}`;
}

/** `bytes` random bytes from the pool, as base64url. */
function randomText(bytes: number): string {
  if (bytes > POOL_BYTES) throw new RangeError(`newId: at most ${POOL_BYTES} random bytes`);
  if (offset + bytes > POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  const text = pool.toString('base64url', offset, offset + bytes);
  offset += bytes;
  return text;
}

/** Digits of a millisecond time in base 36: enough until the year 5188, and '0-9a-z' sort as ASCII. */
const TIME_DIGITS = 9;

/**
 * An identifier whose text sorts by creation time (to the millisecond; ties in random order):
 * prefix, the time in base 36, then 9 random bytes (72 bits). For rows whose primary key and
 * indexes take every new row: a random key puts each insert on a random page of a large table
 * (createTask on 1,000,000 tasks ran at 0.64 of an empty database, bench/README.md), an ordered
 * one appends. The creation time it shows is the task's `createdAt`, which its owner sees anyway.
 */
export function newOrderedId(prefix: string, now = Date.now()): string {
  return `${prefix}_${now.toString(36).padStart(TIME_DIGITS, '0')}${randomText(9)}`;
}
