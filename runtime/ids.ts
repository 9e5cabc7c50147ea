import { randomFillSync } from 'node:crypto';

// One call to the system's random source per 4 KiB instead of one per id: ids are made on every
// request (request ids), and a small randomBytes() call costs more than the rest of newId.
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let offset = POOL_BYTES;

/** Random identifiers with a readable prefix: task_, acct_, key_, req_, dlv_, a_ ... */
export function newId(prefix: string, bytes = 12): string {
  if (bytes > POOL_BYTES) throw new RangeError(`newId: at most ${POOL_BYTES} random bytes`);
  if (offset + bytes > POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  const id = pool.toString('base64url', offset, offset + bytes);
  offset += bytes;
  return `${prefix}_${id}`;
}
