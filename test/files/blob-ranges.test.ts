import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ByteRange } from '../../runtime/blobs/blob-store.js';
import { startTestService, type TestService } from '../support/service.js';

const MIB = 1024 * 1024;
/** Two whole database chunks and part of a third, so ranges can start, end and cross inside and between them. */
const SIZE = 2 * MIB + 12_345;
const OBJECT = Buffer.from(Array.from({ length: SIZE }, (_, i) => (i * 31 + (i >> 8)) & 0xff));
const KEY = 'outputs/range-test.mp4';

async function bytesOf(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of stream) parts.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(parts);
}

const RANGES: [string, { given: ByteRange; want: [number, number] }][] = [
  ['the first byte', { given: { start: 0, end: 0 }, want: [0, 1] }],
  ['inside the first chunk', { given: { start: 100, end: 4_099 }, want: [100, 4_100] }],
  ['across a chunk boundary', { given: { start: MIB - 10, end: MIB + 9 }, want: [MIB - 10, MIB + 10] }],
  ['a whole middle chunk', { given: { start: MIB, end: 2 * MIB - 1 }, want: [MIB, 2 * MIB] }],
  ['across two boundaries', { given: { start: 5, end: 2 * MIB + 5 }, want: [5, 2 * MIB + 6] }],
  ['the last byte', { given: { start: SIZE - 1, end: SIZE - 1 }, want: [SIZE - 1, SIZE] }],
  ['an end past the object, clipped', { given: { start: SIZE - 100, end: SIZE + 10 * MIB }, want: [SIZE - 100, SIZE] }],
  ['the whole object', { given: { start: 0, end: SIZE - 1 }, want: [0, SIZE] }],
  ['a start at the end: nothing', { given: { start: SIZE, end: SIZE + 5 }, want: [0, 0] }],
  ['a start past the end: nothing', { given: { start: SIZE + MIB, end: SIZE + 2 * MIB }, want: [0, 0] }],
];

describe.each(['local', 'database'] as const)('range reads and stat on the %s blob store', (blobStore) => {
  let t: TestService;
  let writtenFrom: number;
  beforeAll(async () => {
    t = await startTestService({ blobStore }, { startWorker: false });
    writtenFrom = Date.now() - 1_000;
    await t.service.ctx.blobs.put(KEY, OBJECT);
  });
  afterAll(async () => t?.close());

  it.each(RANGES)('%s', async (_name, { given, want }) => {
    const read = await t.service.ctx.blobs.readRange(KEY, given);
    expect(read?.size).toBe(SIZE);
    const bytes = await bytesOf(read!.stream);
    expect(bytes.length).toBe(want[1] - want[0]);
    expect(bytes.equals(OBJECT.subarray(want[0], want[1]))).toBe(true);
  });

  it('stat answers the size and the write time without reading; a missing object is undefined', async () => {
    const info = await t.service.ctx.blobs.stat(KEY);
    expect(info?.size).toBe(SIZE);
    expect(info!.modifiedAt).toBeGreaterThanOrEqual(writtenFrom);
    expect(info!.modifiedAt).toBeLessThanOrEqual(Date.now() + 1_000);
    expect(await t.service.ctx.blobs.stat('outputs/none.mp4')).toBeUndefined();
    expect(await t.service.ctx.blobs.readRange('outputs/none.mp4', { start: 0, end: 9 })).toBeUndefined();
  });

  it('a copy is an object of its own: every byte, and a later write to the source leaves it whole', async () => {
    const blobs = t.service.ctx.blobs;
    await blobs.put('uploads/copy-source', OBJECT);
    expect(await blobs.copy('uploads/copy-source', 'library/copy-target.mp4')).toBe(SIZE);
    await blobs.put('uploads/copy-source', Buffer.from('other bytes'));
    const copied = await blobs.read('library/copy-target.mp4');
    expect((await bytesOf(copied!.stream)).equals(OBJECT)).toBe(true);
    await blobs.delete('uploads/copy-source');
    expect((await blobs.stat('library/copy-target.mp4'))?.size).toBe(SIZE);
    expect(await blobs.copy('uploads/none', 'library/none.mp4')).toBeUndefined();
    expect(await blobs.stat('library/none.mp4')).toBeUndefined();
  });

  it('a whole read still answers every byte', async () => {
    const read = await t.service.ctx.blobs.read(KEY);
    expect((await bytesOf(read!.stream)).equals(OBJECT)).toBe(true);
  });

  if (blobStore === 'database')
    it('reads only the chunk rows the range touches (the first chunk gone, the third is still read)', async () => {
      const key = 'outputs/range-rows.mp4';
      await t.service.ctx.blobs.put(key, OBJECT);
      const db = t.service.ctx.db.kysely;
      const { chunk_set } = await db
        .selectFrom('blobs')
        .select('chunk_set')
        .where('key', '=', key)
        .executeTakeFirstOrThrow();
      await db.deleteFrom('blob_chunks').where('chunk_set', '=', chunk_set!).where('seq', '=', 0).execute();
      const tail = await t.service.ctx.blobs.readRange(key, { start: 2 * MIB, end: SIZE - 1 });
      expect((await bytesOf(tail!.stream)).equals(OBJECT.subarray(2 * MIB))).toBe(true);
      // A range that needs the missing row fails instead of ending short.
      const head = await t.service.ctx.blobs.readRange(key, { start: 0, end: 10 });
      await expect(bytesOf(head!.stream)).rejects.toThrow(/changed while it was read/);
    });
});
