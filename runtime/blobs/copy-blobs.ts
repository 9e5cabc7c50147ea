import type { BlobStore } from './blob-store.js';

export interface CopyReport {
  /** Objects written to the target. */
  copied: number;
  /** Objects the target already held at the same size (an earlier, interrupted copy). */
  skipped: number;
  bytes: number;
}

/**
 * Every object of `from` into `to`, under the same key, streamed. Resumable: an object the target
 * already holds at the source's size is skipped, so a copy cut short is run again from the start.
 * Each written object is checked against the source's size (what was written, and what the target
 * then states); a mismatch stops the copy with the key named.
 */
export async function copyBlobs(
  from: BlobStore,
  to: BlobStore,
  onObject: (key: string, outcome: 'copied' | 'skipped') => void = () => {},
): Promise<CopyReport> {
  const report: CopyReport = { copied: 0, skipped: 0, bytes: 0 };
  for await (const { key, size } of from.list()) {
    if ((await to.stat(key))?.size === size) {
      report.skipped++;
      onObject(key, 'skipped');
      continue;
    }
    const source = await from.read(key);
    // Deleted since it was listed (a purge): nothing to copy.
    if (!source) continue;
    const written = await to.put(key, source.stream);
    const stated = (await to.stat(key))?.size;
    if (written !== source.size || stated !== source.size)
      throw new Error(
        `${key}: ${source.size} bytes in the source, ${written} written, ${stated ?? 'none'} in the target`,
      );
    report.copied++;
    report.bytes += written;
    onObject(key, 'copied');
  }
  return report;
}
