import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signMediaPath } from '../../runtime/blobs/blob-store.js';
import { startTestService, type TestService } from '../support/service.js';

const MIB = 1024 * 1024;
/** Past two database chunks, so ranges cross chunk rows. */
const SIZE = 2 * MIB + 12_345;
const OBJECT = Buffer.from(Array.from({ length: SIZE }, (_, i) => (i * 7 + (i >> 10)) & 0xff));
const KEY = 'outputs/ranges-video.mp4';
const EMPTY_KEY = 'outputs/ranges-empty.mp4';

/** The validators of the object, as the server states them (read once by a HEAD). */
interface Current {
  etag: string;
  lastModified: string;
}

type Want = { status: 200; whole: true } | { status: 206; bytes: [number, number] } | { status: 304 } | { status: 416 };

/** [name, { given: the request's headers (from the current validators), want }] */
const CASES: [string, { given: (v: Current) => Record<string, string>; want: Want }][] = [
  ['no Range: the whole file', { given: () => ({}), want: { status: 200, whole: true } }],
  ['bytes=a-b', { given: () => ({ range: 'bytes=0-99' }), want: { status: 206, bytes: [0, 99] } }],
  ['bytes=a-', { given: () => ({ range: 'bytes=100-' }), want: { status: 206, bytes: [100, SIZE - 1] } }],
  ['bytes=-n', { given: () => ({ range: 'bytes=-500' }), want: { status: 206, bytes: [SIZE - 500, SIZE - 1] } }],
  ['one byte', { given: () => ({ range: 'bytes=7-7' }), want: { status: 206, bytes: [7, 7] } }],
  [
    'a range across chunk rows',
    { given: () => ({ range: `bytes=${MIB - 10}-${MIB + 9}` }), want: { status: 206, bytes: [MIB - 10, MIB + 9] } },
  ],
  [
    'a-b beyond the size: clipped',
    {
      given: () => ({ range: `bytes=${SIZE - 10}-${SIZE + 1000}` }),
      want: { status: 206, bytes: [SIZE - 10, SIZE - 1] },
    },
  ],
  [
    'a suffix longer than the file: all of it',
    { given: () => ({ range: `bytes=-${SIZE + 5}` }), want: { status: 206, bytes: [0, SIZE - 1] } },
  ],
  [
    'a last position past what a number holds: clipped',
    { given: () => ({ range: 'bytes=10-99999999999999999999999' }), want: { status: 206, bytes: [10, SIZE - 1] } },
  ],
  ['the unit in capitals', { given: () => ({ range: 'BYTES=0-9' }), want: { status: 206, bytes: [0, 9] } }],
  ['bytes=-0: 416', { given: () => ({ range: 'bytes=-0' }), want: { status: 416 } }],
  ['a start at the size: 416', { given: () => ({ range: `bytes=${SIZE}-` }), want: { status: 416 } }],
  ['a start past the size: 416', { given: () => ({ range: `bytes=${SIZE + 1}-${SIZE + 5}` }), want: { status: 416 } }],
  ['a huge start: 416', { given: () => ({ range: 'bytes=99999999999999999999-' }), want: { status: 416 } }],
  ['last before first: ignored', { given: () => ({ range: 'bytes=5-1' }), want: { status: 200, whole: true } }],
  ['not numbers: ignored', { given: () => ({ range: 'bytes=abc' }), want: { status: 200, whole: true } }],
  ['no equals sign: ignored', { given: () => ({ range: 'bytes 0-1' }), want: { status: 200, whole: true } }],
  ['another unit: ignored', { given: () => ({ range: 'items=0-1' }), want: { status: 200, whole: true } }],
  ['no range after the unit: ignored', { given: () => ({ range: 'bytes=' }), want: { status: 200, whole: true } }],
  ['three numbers: ignored', { given: () => ({ range: 'bytes=1-2-3' }), want: { status: 200, whole: true } }],
  ['a signed suffix: ignored', { given: () => ({ range: 'bytes=--1' }), want: { status: 200, whole: true } }],
  ['several ranges: the whole file', { given: () => ({ range: 'bytes=0-1,5-9' }), want: { status: 200, whole: true } }],
  [
    'several ranges, one unsatisfiable: the whole file',
    { given: () => ({ range: `bytes=0-1,${SIZE + 5}-` }), want: { status: 200, whole: true } },
  ],
  ['If-None-Match the ETag: 304', { given: (v) => ({ 'if-none-match': v.etag }), want: { status: 304 } }],
  [
    'If-None-Match a list holding it: 304',
    { given: (v) => ({ 'if-none-match': `"other", ${v.etag}` }), want: { status: 304 } },
  ],
  [
    'If-None-Match its weak form: 304 (weak comparison)',
    { given: (v) => ({ 'if-none-match': `W/${v.etag}` }), want: { status: 304 } },
  ],
  ['If-None-Match *: 304', { given: () => ({ 'if-none-match': '*' }), want: { status: 304 } }],
  [
    'If-None-Match another tag: 200',
    { given: () => ({ 'if-none-match': '"other"' }), want: { status: 200, whole: true } },
  ],
  [
    'If-None-Match the ETag with a Range: 304',
    { given: (v) => ({ 'if-none-match': v.etag, range: 'bytes=0-9' }), want: { status: 304 } },
  ],
  [
    'If-Modified-Since Last-Modified: 304',
    { given: (v) => ({ 'if-modified-since': v.lastModified }), want: { status: 304 } },
  ],
  [
    'If-Modified-Since before it: 200',
    { given: () => ({ 'if-modified-since': 'Mon, 01 Jan 2001 00:00:00 GMT' }), want: { status: 200, whole: true } },
  ],
  [
    'If-None-Match another tag wins over a matching If-Modified-Since: 200',
    {
      given: (v) => ({ 'if-none-match': '"other"', 'if-modified-since': v.lastModified }),
      want: { status: 200, whole: true },
    },
  ],
  [
    'If-Range the ETag: the range',
    { given: (v) => ({ 'if-range': v.etag, range: 'bytes=10-19' }), want: { status: 206, bytes: [10, 19] } },
  ],
  [
    'If-Range another ETag: the whole file',
    { given: () => ({ 'if-range': '"other"', range: 'bytes=10-19' }), want: { status: 200, whole: true } },
  ],
  [
    'If-Range the weak ETag: the whole file (strong comparison)',
    { given: (v) => ({ 'if-range': `W/${v.etag}`, range: 'bytes=10-19' }), want: { status: 200, whole: true } },
  ],
  [
    'If-Range the Last-Modified date: the range',
    { given: (v) => ({ 'if-range': v.lastModified, range: 'bytes=10-19' }), want: { status: 206, bytes: [10, 19] } },
  ],
  [
    'If-Range an older date: the whole file',
    {
      given: () => ({ 'if-range': 'Mon, 01 Jan 2001 00:00:00 GMT', range: 'bytes=10-19' }),
      want: { status: 200, whole: true },
    },
  ],
  [
    'If-Range another ETag with an unsatisfiable range: the whole file',
    { given: () => ({ 'if-range': '"other"', range: `bytes=${SIZE}-` }), want: { status: 200, whole: true } },
  ],
];

describe.each(['local', 'database'] as const)(
  'media links answer ranges and validators on the %s blob store',
  (blobStore) => {
    let t: TestService;
    let current: Current;
    const link = (key: string, expiresAt = Date.now() + 10 * 60_000) =>
      `${t.url}${signMediaPath(t.service.ctx.secret, key, expiresAt)}`;

    beforeAll(async () => {
      t = await startTestService({ blobStore }, { startWorker: false });
      await t.service.ctx.blobs.put(KEY, OBJECT);
      await t.service.ctx.blobs.put(EMPTY_KEY, new Uint8Array(0));
      const head = await fetch(link(KEY), { method: 'HEAD' });
      current = { etag: head.headers.get('etag')!, lastModified: head.headers.get('last-modified')! };
    });
    afterAll(async () => t?.close());

    it.each(CASES)('%s', async (_name, { given, want }) => {
      const response = await fetch(link(KEY), { headers: given(current) });
      const body = Buffer.from(await response.arrayBuffer());
      expect(response.status).toBe(want.status);
      expect(response.headers.get('accept-ranges')).toBe(want.status === 304 ? null : 'bytes');
      if (want.status === 200) {
        expect(response.headers.get('content-length')).toBe(String(SIZE));
        expect(response.headers.get('content-range')).toBeNull();
        expect(body.equals(OBJECT)).toBe(true);
      }
      if (want.status === 206) {
        const [start, end] = want.bytes;
        expect(response.headers.get('content-range')).toBe(`bytes ${start}-${end}/${SIZE}`);
        expect(response.headers.get('content-length')).toBe(String(end - start + 1));
        expect(response.headers.get('content-type')).toBe('video/mp4');
        expect(body.equals(OBJECT.subarray(start, end + 1))).toBe(true);
      }
      if (want.status === 304) expect(body.length).toBe(0);
      if (want.status === 416) {
        expect(response.headers.get('content-range')).toBe(`bytes */${SIZE}`);
        expect(JSON.parse(body.toString())).toMatchObject({ code: 41601, data: null });
      } else {
        // Every answer but the error names the same validators.
        expect(response.headers.get('etag')).toBe(current.etag);
        expect(response.headers.get('last-modified')).toBe(current.lastModified);
      }
    });

    it('the ETag is strong and stable, Last-Modified an HTTP date of the write', () => {
      expect(current.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
      expect(Date.parse(current.lastModified)).toBeGreaterThan(Date.now() - 60_000);
    });

    it('HEAD answers the headers of the whole file and no body, a Range included', async () => {
      for (const headers of [{}, { range: 'bytes=0-9' }] as Record<string, string>[]) {
        const response = await fetch(link(KEY), { method: 'HEAD', headers });
        expect(response.status).toBe(200);
        const named = ['accept-ranges', 'content-length', 'content-type', 'etag', 'last-modified'];
        expect(named.map((name) => response.headers.get(name))).toEqual([
          'bytes',
          String(SIZE),
          'video/mp4',
          current.etag,
          current.lastModified,
        ]);
        expect((await response.arrayBuffer()).byteLength).toBe(0);
      }
    });

    it('an empty file: the whole of it is 200, any range 416', async () => {
      const whole = await fetch(link(EMPTY_KEY));
      expect(whole.status).toBe(200);
      expect(whole.headers.get('content-length')).toBe('0');
      const ranged = await fetch(link(EMPTY_KEY), { headers: { range: 'bytes=0-' } });
      expect(ranged.status).toBe(416);
      expect(ranged.headers.get('content-range')).toBe('bytes */0');
      await ranged.arrayBuffer();
    });

    it('the link is checked first: expired 40304, altered 40305, whatever the Range; a missing file 404', async () => {
      const expired = await fetch(link(KEY, Date.now() - 60_000), { headers: { range: 'bytes=0-9' } });
      expect(expired.status).toBe(403);
      expect((await expired.json()).code).toBe(40304);
      const altered = await fetch(link(KEY).replace('sig=', 'sig=x'), {
        method: 'GET',
        headers: { range: 'bytes=0-9' },
      });
      expect(altered.status).toBe(403);
      expect((await altered.json()).code).toBe(40305);
      const missing = await fetch(link('outputs/none.mp4'), { headers: { range: 'bytes=0-9' } });
      expect(missing.status).toBe(404);
      expect((await missing.json()).code).toBe(40403);
    });
  },
);
