import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { capped, chunksOf } from './blob-source.js';
import type { BlobInfo, BlobSource, BlobStore, ByteRange, PutOptions } from './blob-store.js';
import type { S3Settings } from './blob-store-setting.js';

/** Parts of a multipart upload: S3's 5 MiB minimum is too many requests for 300 MB videos; two in flight keep memory flat. */
const PART_BYTES = 8 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;

/** The S3 client of the settings: the configured key when given, else the SDK's default credential chain. */
export function s3Client(settings: S3Settings): S3Client {
  const checksum = settings.checksum === 'when_required' ? 'WHEN_REQUIRED' : 'WHEN_SUPPORTED';
  return new S3Client({
    region: settings.region,
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    forcePathStyle: settings.forcePathStyle,
    requestChecksumCalculation: checksum,
    responseChecksumValidation: checksum,
    ...(settings.accessKeyId && settings.secretAccessKey
      ? {
          credentials: {
            accessKeyId: settings.accessKeyId,
            secretAccessKey: settings.secretAccessKey,
            ...(settings.sessionToken ? { sessionToken: settings.sessionToken } : {}),
          },
        }
      : {}),
  });
}

/**
 * Media objects in an S3-compatible bucket (AWS, R2, MinIO, ...), under the configured prefix.
 * Writes stream as multipart uploads (a part or two in memory); reads and ranges are GETs; links
 * and upload tickets may be presigned requests on the bucket itself, so the bytes skip the service.
 */
export class S3BlobStore implements BlobStore {
  readonly client: S3Client;

  constructor(
    private readonly settings: S3Settings,
    client?: S3Client,
  ) {
    this.client = client ?? s3Client(settings);
  }

  /** The bucket's key of a media object. */
  objectKey(key: string): string {
    return `${this.settings.prefix}${key}`;
  }

  /**
   * A multipart upload fed by the source as it streams (a single PUT when it is smaller than a
   * part): the object appears complete or not at all. A failed source aborts the upload; when the
   * store cannot abort (or the process dies), sweepAbandoned removes the parts later.
   */
  async put(key: string, source: BlobSource, options: PutOptions = {}): Promise<number> {
    let size = 0;
    let sourceError: unknown;
    async function* body(): AsyncGenerator<Buffer> {
      try {
        yield* capped(chunksOf(source), options.maxBytes, (n) => (size = n));
      } catch (error) {
        sourceError = error;
        throw error;
      }
    }
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.settings.bucket, Key: this.objectKey(key), Body: Readable.from(body()) },
      partSize: PART_BYTES,
      queueSize: PARTS_IN_FLIGHT,
    });
    try {
      await upload.done();
    } catch (error) {
      // The source's own failure (BlobTooLargeError, a cut connection) is the answer, not the abort's.
      throw sourceError ?? error;
    }
    return size;
  }

  async read(key: string) {
    const got = await this.get(key);
    return got === 'unsatisfiable' ? undefined : got;
  }

  /** A ranged GET: only the bytes asked for leave the store. */
  async readRange(key: string, range: ByteRange) {
    if (range.start > range.end) return this.emptyOf(key);
    const got = await this.get(key, `bytes=${range.start}-${range.end}`);
    // 416 from the store: the start is at or past the end of the object.
    if (got === 'unsatisfiable') return this.emptyOf(key);
    return got;
  }

  async stat(key: string): Promise<BlobInfo | undefined> {
    try {
      const head = await this.client.send(
        new HeadObjectCommand({ Bucket: this.settings.bucket, Key: this.objectKey(key) }),
      );
      return { size: Number(head.ContentLength ?? 0), modifiedAt: head.LastModified?.getTime() ?? 0 };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: this.objectKey(key) }));
  }

  /**
   * A server-side copy (CopyObject: the bytes stay in the store). One request copies objects up to
   * 5 GB, far above any upload cap; the size is read from the copy, not the source, which a
   * presigned PUT may replace meanwhile.
   */
  async copy(from: string, to: string): Promise<number | undefined> {
    try {
      await this.client.send(
        new CopyObjectCommand({
          Bucket: this.settings.bucket,
          Key: this.objectKey(to),
          CopySource: `${this.settings.bucket}/${this.objectKey(from).split('/').map(encodeURIComponent).join('/')}`,
        }),
      );
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
    return (await this.stat(to))?.size;
  }

  async *list(): AsyncGenerator<{ key: string; size: number }> {
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.settings.bucket,
          Prefix: this.settings.prefix || undefined,
          ContinuationToken: token,
        }),
      );
      for (const object of page.Contents ?? []) {
        const key = object.Key?.slice(this.settings.prefix.length);
        // The start check's probe object is not media.
        if (key && !key.startsWith('.mediaforge-check/')) yield { key, size: Number(object.Size ?? 0) };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  /** Multipart uploads under the prefix started more than `olderThanMs` ago (a writer that died mid-way), aborted. */
  async sweepAbandoned(olderThanMs: number): Promise<number> {
    const cutoff = Date.now() - olderThanMs;
    let removed = 0;
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    for (;;) {
      const page = await this.client.send(
        new ListMultipartUploadsCommand({
          Bucket: this.settings.bucket,
          Prefix: this.settings.prefix || undefined,
          KeyMarker: keyMarker,
          UploadIdMarker: uploadIdMarker,
        }),
      );
      for (const upload of page.Uploads ?? []) {
        if (!upload.Key || !upload.UploadId || !upload.Initiated || upload.Initiated.getTime() >= cutoff) continue;
        await this.client.send(
          new AbortMultipartUploadCommand({ Bucket: this.settings.bucket, Key: upload.Key, UploadId: upload.UploadId }),
        );
        removed++;
      }
      if (!page.IsTruncated) return removed;
      keyMarker = page.NextKeyMarker;
      uploadIdMarker = page.NextUploadIdMarker;
    }
  }

  /** A GET of the object on the store itself, valid until `expiresAt` (milliseconds), never later. */
  async presignGet(key: string, expiresAt: number, now: number, contentType?: string): Promise<string> {
    const get = new GetObjectCommand({
      Bucket: this.settings.bucket,
      Key: this.objectKey(key),
      // Objects are written without a type: the link names the one the service would answer.
      ...(contentType ? { ResponseContentType: contentType } : {}),
    });
    return getSignedUrl(this.client, get, { expiresIn: secondsUntil(expiresAt, now) });
  }

  /** A PUT on the store bound to its length and type: both are signed, so another size or type is refused. */
  async presignPut(
    key: string,
    object: { size: number; contentType: string },
    expiresAt: number,
    now: number,
  ): Promise<string> {
    return getSignedUrl(
      this.client,
      new PutObjectCommand({
        Bucket: this.settings.bucket,
        Key: this.objectKey(key),
        ContentLength: object.size,
        ContentType: object.contentType,
      }),
      { expiresIn: secondsUntil(expiresAt, now), signableHeaders: new Set(['content-length', 'content-type']) },
    );
  }

  /**
   * Writes, reads back and deletes a small object, so that `serve` refuses to start against a
   * store it cannot use; a problem comes back as one line that names the bucket and endpoint, never the key's secret.
   */
  async checkWritable(): Promise<void> {
    const probe = this.objectKey(`.mediaforge-check/${randomBytes(8).toString('hex')}`);
    const where = `bucket ${this.settings.bucket} at ${this.settings.endpoint ?? `AWS (${this.settings.region})`}`;
    try {
      await this.client.send(
        new PutObjectCommand({ Bucket: this.settings.bucket, Key: probe, Body: 'mediaforge', ContentLength: 10 }),
      );
      await this.client.send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: probe }));
    } catch (error) {
      throw new Error(`the S3 blob store is not usable: ${describeFailure(error, where)}`);
    }
  }

  close(): void {
    this.client.destroy();
  }

  private async emptyOf(key: string) {
    const info = await this.stat(key);
    return info ? { stream: Readable.from([]) as NodeJS.ReadableStream, size: info.size } : undefined;
  }

  private async get(
    key: string,
    range?: string,
  ): Promise<{ stream: NodeJS.ReadableStream; size: number } | 'unsatisfiable' | undefined> {
    try {
      const got = await this.client.send(
        new GetObjectCommand({ Bucket: this.settings.bucket, Key: this.objectKey(key), Range: range }),
      );
      const total = /\/(\d+)$/.exec(got.ContentRange ?? '')?.[1];
      return { stream: got.Body as Readable, size: Number(total ?? got.ContentLength ?? 0) };
    } catch (error) {
      if (isMissing(error)) return undefined;
      if (range && statusOf(error) === 416) return 'unsatisfiable';
      throw error;
    }
  }
}

function secondsUntil(expiresAt: number, now: number): number {
  // Rounded down: the store's link never outlives the service's.
  return Math.max(1, Math.floor((expiresAt - now) / 1000));
}

function statusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

function isMissing(error: unknown): boolean {
  const name = (error as { name?: string })?.name;
  return name === 'NoSuchKey' || name === 'NotFound' || statusOf(error) === 404;
}

/** What went wrong talking to the store, in words an operator acts on. */
function describeFailure(error: unknown, where: string): string {
  const name = (error as { name?: string; code?: string })?.name ?? '';
  const code = (error as { code?: string })?.code ?? '';
  if (name === 'NoSuchBucket') return `${where}: there is no such bucket`;
  if (['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'InvalidToken', 'ExpiredToken'].includes(name))
    return `${where}: the store refused the access key (${name}); check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY`;
  if (name === 'AccessDenied' || statusOf(error) === 403)
    return `${where}: access denied (${name || 403}); the key needs s3:PutObject, s3:GetObject and s3:DeleteObject`;
  if (name === 'CredentialsProviderError')
    return `${where}: no credentials (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile or role)`;
  if (['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNRESET', 'ETIMEDOUT'].includes(code) || name === 'TimeoutError')
    return `${where}: cannot reach the endpoint (${code || name}); check MEDIAFORGE_S3_ENDPOINT`;
  if (error instanceof S3ServiceException) return `${where}: ${name} (HTTP ${statusOf(error) ?? '?'})`;
  return `${where}: ${(error as Error)?.message ?? String(error)}`;
}
