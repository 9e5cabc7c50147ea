import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BlobStore } from './blob-store.js';

/**
 * The store's half of the statement record (test/support/statement-check.ts): when
 * MEDIAFORGE_STATEMENT_RECORD names a directory (recorded test runs only), each operation this
 * process performs on its store is appended once to DIR/<pid>.jsonl, with the store's kind, so a
 * run can fail when an operation ran on the local store and never on the S3 store, which has its
 * own path for it. Without the setting the store is not wrapped (openBlobStore), at no cost.
 */
export function recordedStore(store: BlobStore, kind: 'local' | 'database' | 's3', dir: string): BlobStore {
  const file = join(dir, `${process.pid}.jsonl`);
  const seen = new Set<string>();
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string' || property === 'constructor') return value;
      return (...args: unknown[]) => {
        if (!seen.has(property)) {
          seen.add(property);
          appendFileSync(file, `${JSON.stringify({ kind: 'store', store: kind, operation: property })}\n`);
        }
        return value.apply(target, args);
      };
    },
  });
}
