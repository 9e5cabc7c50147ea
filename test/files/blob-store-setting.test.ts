import { describe, expect, it } from 'vitest';
import { parseBlobStoreSetting } from '../../runtime/blobs/blob-store-setting.js';
import { configFromEnv } from '../../runtime/config.js';

describe('MEDIAFORGE_BLOB_STORE', () => {
  it.each([
    ['unset', { given: undefined, want: { store: 'local' } }],
    ['local', { given: 'local', want: { store: 'local' } }],
    ['database', { given: 'database', want: { store: 'database' } }],
    ['a bucket', { given: 's3://media', want: { store: 's3', bucket: 'media', prefix: '' } }],
    [
      'a bucket and prefix',
      { given: 's3://media.example/prod/v1/', want: { store: 's3', bucket: 'media.example', prefix: 'prod/v1/' } },
    ],
    [
      'an unknown word',
      {
        given: 'postgres',
        want: { problem: 'MEDIAFORGE_BLOB_STORE must be local, database or s3://BUCKET[/PREFIX] (got postgres)' },
      },
    ],
    [
      'an upper-case bucket',
      {
        given: 's3://Media',
        want: { problem: "MEDIAFORGE_BLOB_STORE: Media is not a bucket name (3-63 of a-z, 0-9, '.', '-')" },
      },
    ],
    [
      's3 without a bucket',
      {
        given: 's3://',
        want: { problem: 'MEDIAFORGE_BLOB_STORE must be local, database or s3://BUCKET[/PREFIX] (got s3://)' },
      },
    ],
  ])('%s', (_name, { given, want }) => {
    expect(parseBlobStoreSetting(given)).toEqual(want);
  });

  it('reads the S3 settings and the AWS conventions; links redirect unless told proxy', () => {
    const config = configFromEnv({
      MEDIAFORGE_BLOB_STORE: 's3://media/p',
      MEDIAFORGE_S3_ENDPOINT: 'http://127.0.0.1:9000',
      MEDIAFORGE_S3_FORCE_PATH_STYLE: 'true',
      MEDIAFORGE_S3_CHECKSUM: 'when_required',
      AWS_REGION: 'eu-west-3',
      AWS_ACCESS_KEY_ID: 'AKID',
      AWS_SECRET_ACCESS_KEY: 'SECRET',
    });
    expect(config.blobStore).toBe('s3');
    expect(config.s3).toEqual({
      bucket: 'media',
      prefix: 'p/',
      endpoint: 'http://127.0.0.1:9000',
      forcePathStyle: true,
      checksum: 'when_required',
      region: 'eu-west-3',
      accessKeyId: 'AKID',
      secretAccessKey: 'SECRET',
      sessionToken: undefined,
    });
    expect(config.mediaLinks).toBe('redirect');
    expect(configFromEnv({ MEDIAFORGE_MEDIA_LINKS: 'proxy' }).mediaLinks).toBe('proxy');
    const aws = configFromEnv({ MEDIAFORGE_BLOB_STORE: 's3://media' }).s3;
    expect([aws?.endpoint, aws?.forcePathStyle, aws?.checksum, aws?.accessKeyId]).toEqual([
      undefined,
      false,
      'when_supported',
      undefined,
    ]);
  });
});
