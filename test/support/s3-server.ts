import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import type { S3Settings } from '../../runtime/blobs/blob-store-setting.js';
import type { Config } from '../../runtime/config.js';

/** The bucket every test S3 server holds. */
export const TEST_BUCKET = 'mediaforge-test';

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

let served = 0;

/**
 * s3rver (an S3-compatible server on npm) on 127.0.0.1, a free port and a temporary directory, with
 * its keys S3RVER/S3RVER. It does not decode aws-chunked bodies: the store runs with
 * `when_required` checksums, as the docs say for such servers.
 */
export async function startTestS3Server(): Promise<TestS3Server> {
  const directory = mkdtempSync(join(tmpdir(), 'mediaforge-s3-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    directory,
    silent: true,
    configureBuckets: [{ name: TEST_BUCKET }],
  });
  const { port } = await server.run();
  return s3ServerAt(`http://127.0.0.1:${port}`, async () => {
    await server.close();
    rmSync(directory, { recursive: true, force: true });
  });
}

/** The settings and environments of a test S3 server already running at `endpoint` (the `s3` projects' one). */
export function s3ServerAt(endpoint: string, close: () => Promise<void> = async () => {}): TestS3Server {
  const prefixOf = (prefix?: string) => prefix ?? `t${process.pid}-${served++}/`;
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
