// @store-suite: references are measured from the store (vitest.config.ts runs it on the local and the S3 store).
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogue } from '../../generated/catalogue.js';
import { createTask, expectOk } from '../http/helpers.js';
import { stubDns } from '../reliability/egress-guard.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';
import { loopbackTls } from '../../support/loopback-tls.js';
import { clip, png } from '../../support/media/fixtures.js';

/**
 * Issue 21 item 2: reference clips are billed at the length the deployment measured. The
 * simulator fetches each external clip through the outbound guard (test switches: loopback on any
 * port; a stub DNS, so `.invalid` names never reach a resolver) and reads it as a stream only as
 * far as the probe needs; a clip it cannot fetch or measure fails the task with reference_invalid,
 * the hold released. Tests may name models; the runtime may not.
 */
const FAMILY_C26 = 'vendor_b/family_c-2.6/reference-to-video';
const FLASH = 'vendor_b/family_c-2.6-flash/reference-to-video';
const CREDITS = 100_000;
/** A real 3-second H.264 MP4 (movie header first), written by the simulator's writer. */
const CLIP_3S = clip(3);
/** The size of the padded clip: its media data grown with zeros, far more than a probe reads. */
const PADDED_BYTES = 32 * 1024 * 1024;

/** The 3 s clip with its `mdat` box declared and sent `PADDED_BYTES` long, streamed in 64 KiB chunks as the reader takes them. */
function paddedClipHead(): { head: Buffer; rest: number } {
  let offset = 0;
  while (CLIP_3S.toString('latin1', offset + 4, offset + 8) !== 'mdat') offset += CLIP_3S.readUInt32BE(offset);
  const head = Buffer.from(CLIP_3S);
  head.writeUInt32BE(PADDED_BYTES - offset, offset);
  return { head, rest: PADDED_BYTES - head.length };
}

describe('reference clips are measured by the deployment before they are billed (family_c-2.6 and 2.6-flash)', () => {
  let t: TestService;
  let files: Server;
  let base = '';
  /** Bytes of the padded clip actually sent, per request (the connection closes when the reader stops). */
  const paddedSent: number[] = [];
  beforeAll(async () => {
    // References must be https URLs: a loopback https listener with the self-signed fixture
    // certificate (trusted through NODE_EXTRA_CA_CERTS: support/loopback-tls.ts).
    files = createServer(loopbackTls(), (req, res) => {
      if (req.url === '/clip-3s.mp4')
        return res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': CLIP_3S.length }).end(CLIP_3S);
      if (req.url === '/still.png')
        return res.writeHead(200, { 'content-type': 'image/png' }).end(png(320, 240, false));
      if (req.url === '/padded-3s.mp4') {
        const { head, rest } = paddedClipHead();
        const index = paddedSent.push(0) - 1;
        res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': PADDED_BYTES });
        const chunk = Buffer.alloc(64 * 1024);
        let left = rest;
        const pump = () => {
          while (left > 0 && !res.destroyed) {
            const part = left >= chunk.length ? chunk : chunk.subarray(0, left);
            left -= part.length;
            paddedSent[index] += part.length;
            if (!res.write(part)) return void res.once('drain', pump);
          }
          if (left === 0) res.end();
        };
        res.on('error', () => {});
        paddedSent[index] += head.length;
        res.write(head);
        pump();
        return;
      }
      res.writeHead(404).end('not here');
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    base = `https://127.0.0.1:${(files.address() as AddressInfo).port}`;
    const dns = stubDns();
    t = await startTestService({
      webhookAllowPrivate: true,
      webhookAllowInsecure: true,
      outboundResolver: dns.resolver,
    });
  });
  afterAll(async () => {
    await t?.close();
    files?.closeAllConnections();
    await new Promise((resolve) => files?.close(resolve));
  });

  /** The credits a task of `input` settles for with these measured facts, from the generated price function. */
  const settled = (
    model: string,
    input: Record<string, unknown>,
    facts: { outputSeconds: number; referenceClipSeconds?: number[] },
  ) => catalogue.get(model)!.price(input, facts).estimatedCredits;

  const billed: [string, { model: string; clip: string; input: Record<string, unknown>; partly?: boolean }][] = [
    [
      'family_c-2.6, one 3 s clip',
      {
        model: FAMILY_C26,
        clip: '/clip-3s.mp4',
        input: { prompt: 'the character from the clip waves', duration_seconds: 2, resolution: '720p' },
      },
    ],
    [
      'family_c-2.6-flash, one 3 s clip',
      {
        model: FLASH,
        clip: '/clip-3s.mp4',
        input: {
          prompt: 'the character from the clip waves',
          duration_seconds: 2,
          resolution: '720p',
          generate_audio: false,
        },
      },
    ],
    [
      'family_c-2.6, a 32 MiB clip whose length sits in its first boxes (read only that far)',
      {
        model: FAMILY_C26,
        clip: '/padded-3s.mp4',
        input: { prompt: 'the character from the clip waves', duration_seconds: 2, resolution: '1080p' },
        partly: true,
      },
    ],
  ];

  it.each(billed)(
    '%s: settled at the measured 3 s, not the assumed 5 s',
    async (_name, { model, clip, input, partly }) => {
      const { apiKey, accountId } = await t.account(CREDITS);
      const full = { ...input, reference_video_urls: [`${base}${clip}`] };
      const r = await createTask(t, apiKey, { model, input: full });
      expectOk(r, 202);
      const assumed = settled(model, full, { outputSeconds: 2 });
      const measured = settled(model, full, { outputSeconds: 2, referenceClipSeconds: [3] });
      expect(measured).toBeLessThan(assumed);
      expect(r.body.data.maxCredits).toBe(assumed);
      const done = await waitForTerminal(t, apiKey, r.body.data.taskId, 30_000);
      expect(done).toMatchObject({ state: 'succeeded', settled: true, credits: measured });
      expect(await t.wallet(accountId)).toMatchObject({ available: CREDITS - measured, held: 0, spent: measured });
      await t.checkLedger(accountId);
      if (partly) {
        // The reader stopped after the movie header and closed the connection long before the end.
        expect(paddedSent.length).toBe(1);
        expect(paddedSent[0]).toBeLessThan(PADDED_BYTES / 2);
      }
    },
  );

  const refused: [string, { clip: string }][] = [
    ['a host that does not resolve', { clip: 'https://clips.invalid/clip.mp4' }],
    ['a 404 answer', { clip: '/missing.mp4' }],
    ['a picture, not a video', { clip: '/still.png' }],
  ];

  it.each(refused)(
    '%s: the task fails with reference_invalid, nothing charged, the hold released',
    async (_name, { clip }) => {
      const { apiKey, accountId } = await t.account(CREDITS);
      const url = clip.startsWith('/') ? `${base}${clip}` : clip;
      const r = await createTask(t, apiKey, {
        model: FAMILY_C26,
        input: { prompt: 'the character from the clip waves', duration_seconds: 2, reference_video_urls: [url] },
      });
      expectOk(r, 202);
      const done = await waitForTerminal(t, apiKey, r.body.data.taskId, 30_000);
      expect(done).toMatchObject({
        state: 'failed',
        errorCode: 'reference_invalid',
        settled: true,
        credits: 0,
        output: null,
      });
      expect(done.errorMessage).toContain('input.reference_video_urls[0]');
      expect(await t.wallet(accountId)).toMatchObject({ available: CREDITS, held: 0, spent: 0 });
      await t.checkLedger(accountId);
    },
  );
});
