import { randomBytes } from 'node:crypto';
import { S3RVER_BUCKET, startS3rver } from '../../support/s3-server.js';
import type { S3Settings } from '../../runtime/blobs/blob-store-setting.js';
import type { Config } from '../../runtime/config.js';

/** The bucket every test S3 server holds. */
export const TEST_BUCKET = S3RVER_BUCKET;

export interface TestS3Server {
  /** http://127.0.0.1:PORT */
  endpoint: string;
  /** Settings for a store on this server, under `prefix` (one per service, so that services sharing the server stay apart). */
  settings(prefix?: string): S3Settings;
  /** startTestService overrides for a service whose media live here. */
  serviceOverrides(prefix?: string): Partial<Config>;
  /** The environment of a `mediaforge serve` child process on this store. */
  environment(prefix?: string): Record<string, string>;
  close(): Promise<void>;
}

/** s3rver on loopback (support/s3-server.ts, shared with bench/), as a test S3 server. */
export async function startTestS3Server(): Promise<TestS3Server> {
  const server = await startS3rver();
  return s3ServerAt(server.endpoint, () => server.close());
}

/** The settings and environments of a test S3 server already running at `endpoint` (the `s3` projects' one). */
export function s3ServerAt(endpoint: string, close: () => Promise<void> = async () => {}): TestS3Server {
  // A random prefix per service (not a counter in this module: files share a fork when isolation is off).
  const prefixOf = (prefix?: string) => prefix ?? `t${randomBytes(6).toString('hex')}/`;
  const settings = (prefix?: string): S3Settings => ({
    bucket: TEST_BUCKET,
    prefix: prefixOf(prefix),
    endpoint,
    forcePathStyle: true,
    checksum: 'when_required',
    region: 'us-east-1',
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
  });
  return {
    endpoint,
    settings,
    serviceOverrides: (prefix) => ({ blobStore: 's3', s3: settings(prefix) }),
    environment: (prefix) => ({
      MEDIAFORGE_BLOB_STORE: `s3://${TEST_BUCKET}/${prefixOf(prefix)}`,
      MEDIAFORGE_S3_ENDPOINT: endpoint,
      MEDIAFORGE_S3_FORCE_PATH_STYLE: 'true',
      MEDIAFORGE_S3_CHECKSUM: 'when_required',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
    }),
    close,
  };
}
