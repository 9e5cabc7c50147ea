// @store-suite: references are streamed from the store to the upstream (vitest.config.ts runs it on the local and the S3 store).
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTask, expectOk } from '../http/helpers.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';
import { loopbackTls } from '../../support/loopback-tls.js';
import { clip } from '../../support/media/fixtures.js';
import { largePng, movieHeaderLast } from '../../support/media/generated-streams.js';

/**
 * Issue 25, N4: the check before a run probes external references from the stream, keeping only
 * what the probe needs (the head; an MP4's movie header wherever it sits, its media data skipped),
 * instead of reading each file whole. Seen from the reference host: a large picture is read only
 * as far as its header, then the connection is closed; a movie header too large to keep is not
 * read at all; a movie header after 19.9 MB of media is still found and measured; an answer
 * without a Content-Length is counted to its end (never kept) where the model limits the size.
 * family_c-3.0 (tests may name models): pictures up to 20,000,000 bytes, clips of 1 to 15 s.
 */
const FAMILY_C3 = 'vendor_b/family_c-3.0/reference-to-video';
const MB = 1000 * 1000;
const LARGE = 19.9 * MB;

type Route = { chunks: () => AsyncIterable<Buffer>; bytes: number; declared: boolean };

describe('references are probed from the stream, not read whole (N4)', () => {
  let t: TestService;
  let files: Server;
  let base = '';
  /**
   * Bytes sent per path (the reader closing the connection stops the sending). What is sent runs
   * ahead of what the reader took by the loopback socket buffers (several MiB once autotuned; 5.2 MB
   * seen for a 1 MiB head on a loaded machine), so "closed long before the end" is under half.
   */
  const sent = new Map<string, number>();
  const routes: Record<string, Route> = {
    '/large.png': { chunks: () => largePng(LARGE), bytes: LARGE, declared: true },
    '/large-unsized.png': { chunks: () => largePng(LARGE), bytes: LARGE, declared: false },
    '/over-unsized.png': { chunks: () => largePng(20.5 * MB), bytes: 20.5 * MB, declared: false },
    '/late-3s.mp4': { chunks: () => movieHeaderLast(clip(3, 24), LARGE), bytes: LARGE, declared: true },
    '/late-20s.mp4': { chunks: () => movieHeaderLast(clip(20, 24), LARGE), bytes: LARGE, declared: true },
    '/huge-moov.mp4': { chunks: () => hugeMovieHeader(LARGE), bytes: LARGE, declared: true },
  };

  async function send(res: ServerResponse, path: string, route: Route): Promise<void> {
    res.writeHead(200, {
      'content-type': 'application/octet-stream',
      ...(route.declared ? { 'content-length': String(route.bytes) } : {}),
    });
    res.on('error', () => {});
    for await (const chunk of route.chunks()) {
      if (res.destroyed) return;
      sent.set(path, (sent.get(path) ?? 0) + chunk.length);
      if (!res.write(chunk))
        await new Promise<void>((resolve) => {
          const go = () => {
            res.off('drain', go);
            res.off('close', go);
            resolve();
          };
          res.on('drain', go);
          res.on('close', go);
        });
    }
    res.end();
  }

  beforeAll(async () => {
    // An https loopback listener with the fixture certificate (trusted through NODE_EXTRA_CA_CERTS: support/loopback-tls.ts).
    files = createServer(loopbackTls(), (req, res) => {
      const route = routes[req.url ?? ''];
      if (!route) return void res.writeHead(404).end();
      void send(res, req.url!, route);
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    base = `https://127.0.0.1:${(files.address() as AddressInfo).port}`;
    t = await startTestService({ webhookAllowPrivate: true, webhookAllowInsecure: true });
  });
  afterAll(async () => {
    await t?.close();
    files?.closeAllConnections();
    await new Promise((resolve) => files?.close(resolve));
  });

  async function run(field: 'reference_image_urls' | 'reference_video_urls', path: string) {
    const { apiKey, accountId } = await t.account(100_000);
    const r = await createTask(t, apiKey, {
      model: FAMILY_C3,
      input: { prompt: 'the reference comes alive', duration_seconds: 5, [field]: [`${base}${path}`] },
    });
    expectOk(r, 202);
    const done = await waitForTerminal(t, apiKey, r.body.data.taskId, 30_000);
    await t.checkLedger(accountId);
    return done;
  }

  it('a 19.9 MB picture with its length declared: read as far as its header, the connection closed long before the end', async () => {
    const done = await run('reference_image_urls', '/large.png');
    expect(done).toMatchObject({ state: 'succeeded', settled: true });
    expect(sent.get('/large.png')).toBeLessThan(LARGE / 2);
  });

  it('an MP4 whose movie header would take more than the probe keeps: refused as unreadable, without reading it', async () => {
    const done = await run('reference_video_urls', '/huge-moov.mp4');
    expect(done).toMatchObject({ state: 'failed', errorCode: 'reference_invalid', credits: 0 });
    expect(done.errorMessage).toContain('input.reference_video_urls[0]');
    expect(sent.get('/huge-moov.mp4')).toBeLessThan(LARGE / 2);
  });

  it.each([
    ['a 3 s clip', '/late-3s.mp4', 'succeeded'],
    ['a 20 s clip (above the 15 s limit)', '/late-20s.mp4', 'failed'],
  ])(
    '%s whose movie header follows 19.9 MB of media: streamed past the media and measured',
    async (_name, path, state) => {
      const done = await run('reference_video_urls', path);
      expect(done.state, done.errorMessage).toBe(state);
      if (state === 'failed') {
        expect(done).toMatchObject({ errorCode: 'reference_invalid', credits: 0 });
        expect(done.errorMessage).toContain('input.reference_video_urls[0]');
        expect(done.errorMessage).toContain('input.reference_video_urls[0] is 20 s long');
      }
    },
  );

  it.each([
    ['19.9 MB', '/large-unsized.png', 'succeeded'],
    ['20.5 MB, above the 20,000,000-byte limit', '/over-unsized.png', 'failed'],
  ])('a picture of %s sent without a length: counted to its end, judged on its size', async (_name, path, state) => {
    const done = await run('reference_image_urls', path);
    expect(done.state).toBe(state);
    if (state === 'failed') expect(done).toMatchObject({ errorCode: 'reference_invalid', credits: 0 });
  });
});

/** An MP4 whose `moov` box says it is nearly the whole file: a movie header no probe should hold. */
async function* hugeMovieHeader(total: number): AsyncGenerator<Buffer> {
  const file = clip(3);
  const ftyp = file.subarray(0, file.readUInt32BE(0));
  const header = Buffer.alloc(8);
  header.writeUInt32BE(total - ftyp.length, 0);
  header.write('moov', 4, 'latin1');
  yield ftyp;
  yield header;
  const zeros = Buffer.alloc(64 * 1024);
  for (let left = total - ftyp.length - 8; left > 0; left -= zeros.length)
    yield left >= zeros.length ? zeros : zeros.subarray(0, left);
}
