/**
 * The S3 blob store against a real S3-compatible server on loopback (s3rver), and, for what
 * s3rver cannot check, against the SDK's own requests and a loopback fake of the multipart calls.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:net';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlobTooLargeError } from '../../runtime/blobs/blob-store.js';
import { S3BlobStore } from '../../runtime/blobs/s3-blob-store.js';
import { probeStored } from '../../runtime/files/probe.js';
import { startFakeMultipartStore } from '../support/fake-multipart-store.js';
import { clip } from '../../support/media/fixtures.js';
import { movieHeaderLast } from '../../support/media/generated-streams.js';
import { startTestS3Server, TEST_BUCKET, type TestS3Server } from '../support/s3-server.js';

const MiB = 1024 * 1024;

/** `total` pseudo-random bytes in chunks of 64 KiB, made as they are read. */
async function* bytes(total: number, seed = 1): AsyncGenerator<Buffer> {
  for (let sent = 0, i = 0; sent < total; i++) {
    const chunk = Buffer.alloc(Math.min(64 * 1024, total - sent), (i * 31 + seed) % 251);
    chunk.writeUInt32BE(i, 0);
    sent += chunk.length;
    yield chunk;
  }
}

async function collect(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) parts.push(chunk);
  return Buffer.concat(parts);
}

async function whole(total: number, seed = 1): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of bytes(total, seed)) parts.push(chunk);
  return Buffer.concat(parts);
}

const sha = (buffer: Buffer) => createHash('sha256').update(buffer).digest('hex');

describe('the S3 blob store on an S3-compatible server', () => {
  let s3: TestS3Server;
  let store: S3BlobStore;
  beforeAll(async () => {
    s3 = await startTestS3Server();
    store = new S3BlobStore(s3.settings('store-test/'));
  });
  afterAll(async () => {
    store?.close();
    await s3?.close();
  });

  it('stores a small object with one PUT and a large one as a multipart upload, under the prefix', async () => {
    expect(await store.put('small/a.png', Buffer.from('tiny'))).toBe(4);
    expect((await collect((await store.read('small/a.png'))!.stream)).toString()).toBe('tiny');
    const size = 21 * MiB + 7; // three parts of 8 MiB
    expect(await store.put('outputs/big.mp4', bytes(size))).toBe(size);
    const read = await store.read('outputs/big.mp4');
    expect(read?.size).toBe(size);
    expect(sha(await collect(read!.stream))).toBe(sha(await whole(size)));
    const listed = await store.client.send(new ListObjectsV2Command({ Bucket: TEST_BUCKET }));
    expect(listed.Contents?.map((o) => o.Key).sort()).toEqual(['store-test/outputs/big.mp4', 'store-test/small/a.png']);
  });

  it.each([
    ['the head', { given: { start: 0, end: 9 }, want: [0, 10] }],
    [
      'the middle, across a part boundary',
      { given: { start: 8 * MiB - 5, end: 8 * MiB + 4 }, want: [8 * MiB - 5, 10] },
    ],
    ['an end past the last byte, clipped', { given: { start: 21 * MiB, end: 99 * MiB }, want: [21 * MiB, 7] }],
    ['a start past the end, empty', { given: { start: 22 * MiB, end: 23 * MiB }, want: [0, 0] }],
  ])('reads %s as a range', async (_name, { given, want }) => {
    const all = await whole(21 * MiB + 7);
    const got = await store.readRange('outputs/big.mp4', given);
    expect(got?.size).toBe(21 * MiB + 7);
    const read = await collect(got!.stream);
    expect(read.length).toBe(want[1]);
    expect(read.equals(all.subarray(want[0], want[0] + want[1]))).toBe(true);
  });

  it('answers stat without reading, and nothing for a missing object', async () => {
    const info = await store.stat('outputs/big.mp4');
    expect(info?.size).toBe(21 * MiB + 7);
    expect(Math.abs(info!.modifiedAt - Date.now())).toBeLessThan(5 * 60_000);
    expect(await store.stat('outputs/none.mp4')).toBeUndefined();
    expect(await store.read('outputs/none.mp4')).toBeUndefined();
    expect(await store.readRange('outputs/none.mp4', { start: 0, end: 1 })).toBeUndefined();
  });

  it('keeps nothing of a source past maxBytes or one that fails, and answers the source error', async () => {
    await expect(store.put('refused/too-big.mp4', bytes(18 * MiB), { maxBytes: 17 * MiB })).rejects.toBeInstanceOf(
      BlobTooLargeError,
    );
    await expect(store.put('refused/small-too-big.png', bytes(100), { maxBytes: 99 })).rejects.toBeInstanceOf(
      BlobTooLargeError,
    );
    async function* failing() {
      yield* bytes(9 * MiB);
      throw new Error('connection cut');
    }
    await expect(store.put('refused/cut.mp4', failing())).rejects.toThrow('connection cut');
    for (const key of ['refused/too-big.mp4', 'refused/small-too-big.png', 'refused/cut.mp4'])
      expect(await store.stat(key)).toBeUndefined();
  });

  it('probes a stored video by range reads: the head, then the movie header after 30 MB of media, never the media', async () => {
    const total = 30 * MiB;
    const probing = new S3BlobStore(s3.settings('probe/'));
    await probing.put('late.mp4', movieHeaderLast(clip(3, 24), total));
    const gets: string[] = [];
    let received = 0;
    probing.client.middlewareStack.add(
      (next) => async (args) => {
        const request = args.request as { method: string; headers: Record<string, string> };
        if (request.method === 'GET') gets.push(request.headers.range ?? 'whole');
        return next(args);
      },
      { step: 'deserialize', name: 'recordGets' },
    );
    const original = probing.readRange.bind(probing);
    probing.readRange = async (key, range) => {
      const got = await original(key, range);
      if (got) (got.stream as NodeJS.ReadableStream).on('data', (chunk: Buffer) => (received += chunk.length));
      return got;
    };
    const stored = await probeStored(probing, 'late.mp4');
    expect(stored?.size).toBe(total);
    expect(stored?.probed).toMatchObject({ kind: 'video', format: 'mp4', durationSeconds: 3 });
    expect(gets.length).toBeGreaterThanOrEqual(2);
    expect(gets.every((range) => /^bytes=\d+-\d+$/.test(range))).toBe(true);
    // The head read is cut short and the media jumped over: far less than the object crosses the wire.
    expect(received).toBeLessThan(total / 2);
    probing.close();
  });

  it('deletes objects', async () => {
    await store.put('gone/x.png', Buffer.from('x'));
    await store.delete('gone/x.png');
    expect(await store.stat('gone/x.png')).toBeUndefined();
    await store.delete('gone/never-was.png'); // deleting what is not there is no error
  });

  it('hands out a presigned GET the server honours, expiring no later than asked', async () => {
    const now = Date.now();
    const url = new URL(await store.presignGet('small/a.png', now + 90_500, now));
    expect(url.searchParams.get('X-Amz-Expires')).toBe('90');
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('tiny');
  });

  it('hands out a presigned PUT that signs its length and type, which the server takes', async () => {
    const now = Date.now();
    const url = new URL(
      await store.presignPut('uploads/f1.png', { size: 5, contentType: 'image/png' }, now + 60_000, now),
    );
    expect(url.searchParams.get('X-Amz-SignedHeaders')?.split(';')).toEqual(
      expect.arrayContaining(['content-length', 'content-type', 'host']),
    );
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(/^S3RVER\/\d{8}\/us-east-1\/s3\/aws4_request$/);
    const put = await fetch(url, { method: 'PUT', body: 'hello', headers: { 'content-type': 'image/png' } });
    expect(put.status).toBe(200);
    expect((await collect((await store.read('uploads/f1.png'))!.stream)).toString()).toBe('hello');
  });

  it('signs every request with the configured key (recorded through the SDK middleware), never sending the secret', async () => {
    const signed = new S3BlobStore({ ...s3.settings('signed/'), secretAccessKey: 'very-secret-value' });
    const seen: { authorization?: string; url: string }[] = [];
    signed.client.middlewareStack.add(
      (next) => async (args) => {
        const request = args.request as { headers: Record<string, string>; path: string; query?: object };
        seen.push({
          authorization: request.headers.authorization,
          url: `${request.path} ${JSON.stringify(request.query ?? {})} ${JSON.stringify(request.headers)}`,
        });
        return next(args);
      },
      { step: 'deserialize', name: 'recordSignedRequests' },
    );
    await signed.put('a.png', Buffer.from('a'));
    await signed.stat('a.png');
    await signed.readRange('a.png', { start: 0, end: 0 });
    await signed.delete('a.png');
    expect(seen.length).toBe(4);
    for (const request of seen) {
      expect(request.authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=S3RVER\/\d{8}\/us-east-1\/s3\/aws4_request, SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}$/,
      );
      expect(request.url).not.toContain('very-secret-value');
    }
    signed.close();
  });

  it('is found writable; a missing bucket and an unreachable endpoint are one line each', async () => {
    await expect(store.checkWritable()).resolves.toBeUndefined();
    const noBucket = new S3BlobStore({ ...s3.settings(), bucket: 'no-such-bucket' });
    await expect(noBucket.checkWritable()).rejects.toThrow(
      `the S3 blob store is not usable: bucket no-such-bucket at ${s3.endpoint}: there is no such bucket`,
    );
    noBucket.close();
    const closedPort = await freePort();
    const unreachable = new S3BlobStore({ ...s3.settings(), endpoint: `http://127.0.0.1:${closedPort}` });
    await expect(unreachable.checkWritable()).rejects.toThrow(/cannot reach the endpoint \(ECONNREFUSED\)/);
    unreachable.close();
  });
});

describe('what s3rver cannot answer, against a loopback fake', () => {
  it('aborts the multipart uploads under the prefix older than the grace, page by page', async () => {
    const hour = 3600_000;
    const old = new Date(Date.now() - 25 * hour);
    const fresh = new Date(Date.now() - hour);
    const fake = await startFakeMultipartStore(
      'media',
      [
        { key: 'p/outputs/a.mp4', uploadId: 'u1', initiated: old },
        { key: 'p/outputs/a.mp4', uploadId: 'u2', initiated: fresh },
        { key: 'p/library/f.mp4', uploadId: 'u3', initiated: old },
        { key: 'p/library/g.mp4', uploadId: 'u4', initiated: old },
        { key: 'other/x.mp4', uploadId: 'u5', initiated: old },
      ],
      { pageSize: 2 },
    );
    const store = new S3BlobStore({
      bucket: 'media',
      prefix: 'p/',
      endpoint: fake.endpoint,
      forcePathStyle: true,
      checksum: 'when_required',
      region: 'us-east-1',
      accessKeyId: 'AKID',
      secretAccessKey: 'SECRET',
    });
    try {
      expect(await store.sweepAbandoned(24 * hour)).toBe(3);
      expect(fake.uploads.map((u) => u.uploadId).sort()).toEqual(['u2', 'u5']);
      expect(fake.requests.filter((r) => r.startsWith('GET')).length).toBe(2);
      expect(await store.sweepAbandoned(24 * hour)).toBe(0);
    } finally {
      store.close();
      await fake.close();
    }
  });

  it('names a refused key without printing its secret', async () => {
    const fake = await startFakeMultipartStore('media', [], { refuseKey: true });
    const store = new S3BlobStore({
      bucket: 'media',
      prefix: '',
      endpoint: fake.endpoint,
      forcePathStyle: true,
      checksum: 'when_required',
      region: 'us-east-1',
      accessKeyId: 'AKIDWRONG',
      secretAccessKey: 'wrong-secret-7f3a',
    });
    try {
      const error = await store.checkWritable().then(
        () => undefined,
        (e: Error) => e,
      );
      expect(error?.message).toBe(
        `the S3 blob store is not usable: bucket media at ${fake.endpoint}: the store refused the access key (InvalidAccessKeyId); check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY`,
      );
      expect(error?.message).not.toContain('wrong-secret-7f3a');
    } finally {
      store.close();
      await fake.close();
    }
  });
});

/** A loopback port nothing listens on (taken, then released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
