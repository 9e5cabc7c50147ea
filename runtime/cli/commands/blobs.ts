/** `mediaforge blobs copy --to STORE`: the media of the current store copied to another (switching stores, docs/files-and-assets.md). */
import { parseBlobStoreSetting } from '../../blobs/blob-store-setting.js';
import { copyBlobs } from '../../blobs/copy-blobs.js';
import { openBlobStore } from '../../blobs/open-blob-store.js';
import { systemClock } from '../../clock.js';
import { configFromEnv, processEnvironment } from '../../config.js';
import { withCommandDb } from '../command-db.js';
import type { CommandInput } from '../commands.js';
import { UsageError } from '../usage-error.js';

export async function blobsCopy({ values }: CommandInput): Promise<number> {
  const to = String(values.to);
  const env = processEnvironment({ MEDIAFORGE_DB: typeof values.db === 'string' ? values.db : undefined });
  for (const [name, value] of [
    ['MEDIAFORGE_BLOB_STORE', env.MEDIAFORGE_BLOB_STORE],
    ['--to', to],
  ] as const) {
    const setting = parseBlobStoreSetting(value);
    if ('problem' in setting) throw new UsageError(setting.problem.replace('MEDIAFORGE_BLOB_STORE', name));
  }
  const source = configFromEnv(env);
  const target = configFromEnv({ ...env, MEDIAFORGE_BLOB_STORE: to });
  const report = await withCommandDb(source, async (db) => {
    const from = await openBlobStore(source, db, systemClock);
    const into = await openBlobStore(target, db, systemClock);
    try {
      await into.checkWritable?.();
      return await copyBlobs(from, into);
    } finally {
      from.close?.();
      into.close?.();
    }
  });
  console.log(
    values.json
      ? JSON.stringify(report)
      : `copied ${report.copied} objects (${report.bytes} bytes), ${report.skipped} already there`,
  );
  return 0;
}
