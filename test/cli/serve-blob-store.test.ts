/**
 * `mediaforge serve` and its media store: a setting that names no store, and an S3 store it cannot
 * use (no bucket, unreachable), stop it at once with one line; a usable bucket starts it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveUntilListening } from '../support/cli-process.js';
import { startTestS3Server, TEST_BUCKET, type TestS3Server } from '../support/s3-server.js';

/** stderr without Node's own warnings (the AWS SDK's notice about future Node versions). */
const ownLines = (stderr: string) =>
  stderr
    .split('\n')
    .filter((line) => line.startsWith('mediaforge:'))
    .join('\n');

describe('serve and MEDIAFORGE_BLOB_STORE', () => {
  let s3: TestS3Server;
  let dir: string;
  beforeAll(async () => {
    s3 = await startTestS3Server();
    dir = mkdtempSync(join(tmpdir(), 'mediaforge-serve-store-'));
  });
  afterAll(async () => {
    await s3?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a value that names no store, in one line', async () => {
    const run = await serveUntilListening(dir, { MEDIAFORGE_BLOB_STORE: 'S3:media' });
    expect(run.code).toBe(1);
    expect(ownLines(run.stderr)).toBe(
      'mediaforge: MEDIAFORGE_BLOB_STORE must be local, database or s3://BUCKET[/PREFIX] (got S3:media)',
    );
  }, 60_000);

  it('refuses a bucket that does not exist, naming it and never the secret', async () => {
    const env = {
      ...s3.environment('serve/'),
      MEDIAFORGE_BLOB_STORE: 's3://missing-bucket',
      AWS_SECRET_ACCESS_KEY: 'shh-7f3a',
    };
    const run = await serveUntilListening(dir, env);
    expect(run.code).toBe(1);
    expect(ownLines(run.stderr)).toBe(
      `mediaforge: the S3 blob store is not usable: bucket missing-bucket at ${s3.endpoint}: there is no such bucket`,
    );
    expect(run.stderr + run.stdout).not.toContain('shh-7f3a');
  }, 60_000);

  it('refuses an endpoint nothing answers', async () => {
    const run = await serveUntilListening(dir, {
      ...s3.environment('serve/'),
      MEDIAFORGE_S3_ENDPOINT: 'http://s3.mediaforge.invalid',
    });
    expect(run.code).toBe(1);
    expect(ownLines(run.stderr)).toMatch(
      /^mediaforge: the S3 blob store is not usable: bucket .* at http:\/\/s3\.mediaforge\.invalid: cannot reach the endpoint \((ENOTFOUND|EAI_AGAIN)\); check MEDIAFORGE_S3_ENDPOINT$/,
    );
  }, 60_000);

  it('starts on a bucket it can write, and leaves no check object behind', async () => {
    const run = await serveUntilListening(dir, s3.environment('serve/'));
    // Stopped by the test once it listens (through tsx in development, the exit is the signal's).
    expect(run.stdout).toContain('mediaforge listening on');
    expect(ownLines(run.stderr)).toBe('');
    const { S3BlobStore } = await import('../../runtime/blobs/s3-blob-store.js');
    const store = new S3BlobStore(s3.settings('serve/'));
    const { ListObjectsV2Command } = await import('@aws-sdk/client-s3');
    const listed = await store.client.send(new ListObjectsV2Command({ Bucket: TEST_BUCKET, Prefix: 'serve/' }));
    expect(listed.KeyCount ?? 0).toBe(0);
    store.close();
  }, 60_000);
});
