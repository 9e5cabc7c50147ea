/**
 * Uploads straight to the S3 store (issue 29, item 3): the ticket's URL is a presigned PUT on the
 * store bound to the declared size and type; the commit checks the object's size and probes it by
 * range reads; a refused file is deleted from the bucket and its reservation released.
 */
import { Mediaforge } from '@mediaforge/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteSpentTicketKeys } from '../../runtime/files/cleanup.js';
import { expectError, expectOk } from '../http/helpers.js';
import type { HttpResult } from '../support/service.js';
import { startTestS3Server, type TestS3Server } from '../support/s3-server.js';
import { startTestService, type TestService } from '../support/service.js';
import { png } from '../../support/media/fixtures.js';
import { putBytes, ticketFor, UNLOCKED } from './support.js';

/** The data of a 2xx envelope. */
function ok(r: HttpResult) {
  expectOk(r);
  return r.body;
}

describe('upload tickets on the S3 store', () => {
  let s3: TestS3Server;
  let t: TestService;
  let apiKey: string;
  beforeAll(async () => {
    s3 = await startTestS3Server();
    t = await startTestService(s3.serviceOverrides(), { startWorker: false });
    apiKey = (await t.account(UNLOCKED)).apiKey;
  });
  afterAll(async () => {
    await t?.close();
    await s3?.close();
  });

  const usage = async () => ok(await t.call('GET', '/api/v1/assets/usage', { key: apiKey })).data;
  const uploadRow = (fileId: string) =>
    t.service.ctx.db.kysely.selectFrom('uploads').selectAll().where('id', '=', fileId).executeTakeFirstOrThrow();

  it('hands out a presigned PUT on the store, signing length and type; the client uploads through it', async () => {
    const image = png(64, 48, true);
    const ticket = ok(
      await ticketFor(t, apiKey, { fileName: 'logo.png', contentType: 'image/png', size: image.length }),
    ).data;
    const url = new URL(ticket.uploadUrl);
    expect(url.origin).toBe(s3.endpoint);
    expect(url.searchParams.get('X-Amz-SignedHeaders')?.split(';')).toEqual(
      expect.arrayContaining(['content-length', 'content-type']),
    );
    expect(ticket).toMatchObject({ method: 'PUT', headers: { 'Content-Type': 'image/png' }, maxBytes: image.length });

    const client = new Mediaforge({ apiKey, baseUrl: t.url });
    const asset = await client.files.uploadAsset(image, { fileName: 'logo.png', contentType: 'image/png' });
    expect(asset).toMatchObject({ kind: 'image', width: 64, height: 48, hasAlpha: true, bytes: image.length });
    const preview = await fetch(asset.preview!);
    expect(preview.status).toBe(200);
    expect(Buffer.from(await preview.arrayBuffer()).equals(image)).toBe(true);
  });

  it('is final once committed: the ticket cannot replace the asset, whose key takes the probed extension', async () => {
    const first = png(64, 48, false);
    const other = png(8, 8, true);
    // The same length, so the presigned PUT (length signed) takes the second file as well.
    const second = Buffer.concat([other, Buffer.alloc(first.length - other.length)]);
    expect(second.length).toBe(first.length);
    const ticket = ok(
      await ticketFor(t, apiKey, { fileName: 'logo.html', contentType: 'image/png', size: first.length }),
    ).data;
    expect((await putBytes(ticket.uploadUrl, first, ticket.headers)).status).toBe(200);
    const ticketKey = (await uploadRow(ticket.fileId)).blob_key!;
    const asset = ok(await t.call('POST', `/api/v1/files/${ticket.fileId}/commit`, { key: apiKey, body: {} })).data;
    const assetKey = (
      await t.service.ctx.db.kysely
        .selectFrom('assets')
        .select('blob_key')
        .where('id', '=', asset.assetId)
        .executeTakeFirstOrThrow()
    ).blob_key;
    expect(assetKey).not.toBe(ticketKey);
    expect(assetKey).toMatch(/\.png$/);
    expect(await t.service.ctx.blobs.stat(ticketKey)).toBeUndefined();

    // The presigned PUT is still valid: it writes again, and the asset does not change.
    expect((await putBytes(ticket.uploadUrl, second, ticket.headers)).status).toBe(200);
    const again = ok(await t.call('POST', `/api/v1/files/${ticket.fileId}/commit`, { key: apiKey, body: {} })).data;
    expect(again).toMatchObject({ assetId: asset.assetId, width: 64, height: 48, hasAlpha: false });
    const fetched = ok(await t.call('GET', `/api/v1/assets/${asset.assetId}`, { key: apiKey })).data;
    const served = Buffer.from(await (await fetch(fetched.preview)).arrayBuffer());
    expect(served.equals(first)).toBe(true);

    // What the ticket wrote after the commit is nobody's: deleted by the cleanup once the ticket has expired.
    expect(await t.service.ctx.blobs.stat(ticketKey)).toBeDefined();
    await t.service.ctx.db.kysely
      .updateTable('uploads')
      .set({ expires_at: Date.now() - 1000 })
      .where('id', '=', ticket.fileId)
      .execute();
    // The cleanup's part for committed tickets (s3rver lists no multipart uploads, which its sweep asks for).
    await deleteSpentTicketKeys(t.service.ctx, Date.now());
    expect(await t.service.ctx.blobs.stat(ticketKey)).toBeUndefined();
    expect((await uploadRow(ticket.fileId)).blob_key).toBeNull();
    expect(Buffer.from(await (await fetch(fetched.preview)).arrayBuffer()).equals(first)).toBe(true);
  });

  it('commits nothing before the bytes are there', async () => {
    const ticket = ok(await ticketFor(t, apiKey, { fileName: 'a.png', contentType: 'image/png', size: 100 })).data;
    expectError(await t.call('POST', `/api/v1/files/${ticket.fileId}/commit`, { key: apiKey, body: {} }), 400, 40012);
  });

  it('refuses bytes that are not of the declared kind: deleted from the bucket, the reservation released', async () => {
    const text = Buffer.from('this is not a picture at all, only words');
    const ticket = ok(
      await ticketFor(t, apiKey, { fileName: 'fake.png', contentType: 'image/png', size: text.length }),
    ).data;
    const before = (await usage()).reservedBytes - text.length;
    expect((await putBytes(ticket.uploadUrl, text, ticket.headers)).status).toBe(200);
    const key = (await uploadRow(ticket.fileId)).blob_key!;
    expect(await t.service.ctx.blobs.stat(key)).toBeDefined();
    const refused = await t.call('POST', `/api/v1/files/${ticket.fileId}/commit`, { key: apiKey, body: {} });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe(40011);
    expect(await t.service.ctx.blobs.stat(key)).toBeUndefined();
    expect((await usage()).reservedBytes).toBe(before);
    expect((await uploadRow(ticket.fileId)).state).toBe('failed');
  });

  it('refuses an object larger than declared (a store that does not check the signed length), and deletes it', async () => {
    const image = png(8, 8, false);
    const ticket = ok(
      await ticketFor(t, apiKey, { fileName: 'b.png', contentType: 'image/png', size: image.length - 10 }),
    ).data;
    const before = (await usage()).reservedBytes - (image.length - 10);
    // s3rver takes the PUT whatever its length; AWS, R2 and MinIO refuse it with SignatureDoesNotMatch.
    await putBytes(ticket.uploadUrl, image, ticket.headers);
    const key = (await uploadRow(ticket.fileId)).blob_key!;
    expectError(await t.call('POST', `/api/v1/files/${ticket.fileId}/commit`, { key: apiKey, body: {} }), 413, 41301);
    expect(await t.service.ctx.blobs.stat(key)).toBeUndefined();
    expect((await usage()).reservedBytes).toBe(before);
  });
});
