import type { Environment } from '../config.js';

/** Where an S3-compatible store is and how to talk to it (MEDIAFORGE_BLOB_STORE=s3://..., MEDIAFORGE_S3_*, AWS_*). */
export interface S3Settings {
  bucket: string;
  /** Prepended to every object key ('' or ending in '/'). */
  prefix: string;
  /** An S3-compatible server (R2, MinIO, a test server); unset: AWS. */
  endpoint?: string;
  forcePathStyle: boolean;
  /** `when_required` for servers that do not decode aws-chunked bodies with trailing checksums. */
  checksum: 'when_supported' | 'when_required';
  region: string;
  /** From AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY; unset: the SDK's default credential chain. */
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
}

export type BlobStoreSetting =
  | { store: 'local' | 'database' }
  | { store: 's3'; bucket: string; prefix: string }
  | { problem: string };

/** A bucket name as S3 allows it (3-63 lowercase letters, digits, dots, hyphens). */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** MEDIAFORGE_BLOB_STORE: `local` (or unset), `database`, or `s3://BUCKET[/PREFIX]`; anything else is a problem, in one line. */
export function parseBlobStoreSetting(value: string | undefined): BlobStoreSetting {
  if (value === undefined || value === '' || value === 'local') return { store: 'local' };
  if (value === 'database') return { store: 'database' };
  const s3 = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(value);
  if (!s3) return { problem: `MEDIAFORGE_BLOB_STORE must be local, database or s3://BUCKET[/PREFIX] (got ${value})` };
  if (!BUCKET.test(s3[1]))
    return { problem: `MEDIAFORGE_BLOB_STORE: ${s3[1]} is not a bucket name (3-63 of a-z, 0-9, '.', '-')` };
  const path = (s3[2] ?? '').replace(/^\/+|\/+$/g, '');
  return { store: 's3', bucket: s3[1], prefix: path ? `${path}/` : '' };
}

/** The S3 settings of an environment, for a store named by MEDIAFORGE_BLOB_STORE. */
export function s3SettingsFromEnv(env: Environment, bucket: string, prefix: string): S3Settings {
  return {
    bucket,
    prefix,
    endpoint: env.MEDIAFORGE_S3_ENDPOINT || undefined,
    forcePathStyle: env.MEDIAFORGE_S3_FORCE_PATH_STYLE === 'true' || env.MEDIAFORGE_S3_FORCE_PATH_STYLE === '1',
    checksum: env.MEDIAFORGE_S3_CHECKSUM === 'when_required' ? 'when_required' : 'when_supported',
    region: env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
    accessKeyId: env.AWS_ACCESS_KEY_ID || undefined,
    secretAccessKey: env.AWS_SECRET_ACCESS_KEY || undefined,
    sessionToken: env.AWS_SESSION_TOKEN || undefined,
  };
}
