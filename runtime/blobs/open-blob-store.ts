import { join, resolve } from 'node:path';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Db } from '../storage/dialect.js';
import { type BlobStore, DatabaseBlobStore, LocalBlobStore } from './blob-store.js';
import { recordedStore } from './recorded-store.js';

/** The blob store the configuration names (MEDIAFORGE_BLOB_STORE), its operations recorded in a recorded test run. */
export async function openBlobStore(config: Config, db: Db, clock: Clock): Promise<BlobStore> {
  const store = await storeOf(config, db, clock);
  return config.statementRecordDir ? recordedStore(store, config.blobStore, config.statementRecordDir) : store;
}

async function storeOf(config: Config, db: Db, clock: Clock): Promise<BlobStore> {
  if (config.blobStore === 'database') return new DatabaseBlobStore(db.kysely, () => clock.now());
  if (config.blobStore === 's3') {
    if (!config.s3) throw new Error('the S3 blob store needs its settings (MEDIAFORGE_BLOB_STORE=s3://BUCKET)');
    // Loaded only when chosen: the AWS SDK takes about half a second to import (447 ms here), which
    // every serve, CLI command and test service on the other stores would otherwise pay.
    const { S3BlobStore } = await import('./s3-blob-store.js');
    return new S3BlobStore(config.s3);
  }
  return new LocalBlobStore(resolve(join(config.dataDir, 'blobs')));
}
