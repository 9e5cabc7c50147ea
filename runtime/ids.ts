import { randomBytes } from 'node:crypto';

/** Random identifiers with a readable prefix: task_, acct_, key_, req_, dlv_, a_ ... */
export function newId(prefix: string, bytes = 12): string {
  return `${prefix}_${randomBytes(bytes).toString('base64url')}`;
}
