import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ManualClock } from '../../runtime/clock.js';
import { expireUploads } from '../../runtime/files/cleanup.js';
import { expectError, expectOk } from '../http/helpers.js';
import { startTestService, type TestService } from '../support/service.js';
import { serviceForSuite } from '../support/suite-service.js';
import { jpg, mp4, png, safetensors, wav } from '../../support/media/fixtures.js';
import { putBytes, ticketFor, UNLOCKED, upload } from './support.js';

describe('the upload flow with real files', () => {
  const svc = serviceForSuite(UNLOCKED);

  it('a ticket is a signed single-use PUT URL on the service itself, with the declared type as header', async () => {
    const r = await ticketFor(svc.t, svc.account.apiKey, { fileName: 'a.png', contentType: 'image/png', size: 1234 });
    expectOk(r);
    const ticket = r.body.data;
    expect(ticket).toMatchObject({
      fileId: expect.stringMatching(/^f_/),
      method: 'PUT',
      headers: { 'Content-Type': 'image/png' },
      maxBytes: 1234,
    });
    expect(ticket.uploadUrl).toMatch(
      new RegExp(`^${svc.t.url}/api/v1/uploads/${ticket.fileId}\\?expires=\\d+&sig=[\\w-]+$`),
    );
    const minutes = (Date.parse(ticket.expiresAt) - Date.now()) / 60_000;
    expect(minutes).toBeGreaterThan(14);
    expect(minutes).toBeLessThanOrEqual(15);
  });

  it.each([
    [
      'a PNG with transparency',
      png(320, 240, true),
      'image/png',
      'alpha.png',
      { kind: 'image', mime: 'image/png', format: 'png', width: 320, height: 240, hasAlpha: true },
    ],
    [
      'a PNG without transparency',
      png(320, 240, false),
      'image/png',
      'opaque.png',
      { kind: 'image', mime: 'image/png', format: 'png', width: 320, height: 240, hasAlpha: false },
    ],
    [
      'a 300 px JPEG',
      jpg(300, 300),
      'image/jpeg',
      'square.jpg',
      { kind: 'image', mime: 'image/jpeg', format: 'jpeg', width: 300, height: 300, hasAlpha: false },
    ],
    [
      'a 1.5 s WAV',
      wav(1.5),
      'audio/wav',
      'tone.wav',
      { kind: 'audio', mime: 'audio/wav', format: 'wav', durationSeconds: 1.5 },
    ],
    [
      'a 2 s MP4',
      mp4(),
      'video/mp4',
      'clip.mp4',
      { kind: 'video', mime: 'video/mp4', format: 'mp4', width: 160, height: 90, durationSeconds: 2, fps: 4 },
    ],
    [
      'a LoRA',
      safetensors(),
      'application/octet-stream',
      'style.safetensors',
      { kind: 'lora', mime: 'application/octet-stream', format: 'safetensors' },
    ],
    [
      'a text document',
      Buffer.from('# Brief\n\nA fox in the snow.\n'),
      'text/markdown',
      'brief.md',
      { kind: 'document', mime: 'text/plain', format: 'txt' },
    ],
  ])('%s: uploaded, committed and probed from its bytes', async (_name, bytes, contentType, fileName, expected) => {
    const before = await svc.t.wallet(svc.account.accountId);
    const { ticket, put, asset } = await upload(svc.t, svc.account.apiKey, bytes, contentType, fileName);
    expect(put.body.data).toEqual({ fileId: ticket.fileId, size: bytes.byteLength });
    expect(asset).toMatchObject({
      ...expected,
      name: fileName,
      bytes: bytes.byteLength,
      assetId: expect.stringMatching(/^a_/),
    });
    expect(asset.uri).toBe(`service://a/${asset.assetId}`);
    if (!('hasAlpha' in expected)) expect(asset.hasAlpha).toBeUndefined();
    if (['image', 'video', 'audio'].includes(expected.kind)) {
      // Only a short private preview: a signed link of about five minutes, serving the same bytes.
      expect(asset.preview).toMatch(/\/api\/v1\/media\/.+\?expires=\d+&sig=/);
      expect(Date.parse(asset.previewExpiresAt) - Date.now()).toBeLessThanOrEqual(5 * 60_000);
      const served = await fetch(asset.preview);
      expect(served.status).toBe(200);
      expect(Buffer.from(await served.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
    } else expect(asset.preview).toBeNull();
    // Uploads never touch credits.
    expect(await svc.t.wallet(svc.account.accountId)).toEqual(before);
    await svc.t.checkLedger(svc.account.accountId);
  });

  it('the mime comes from the bytes, not from the name: a PNG named .jpg is a PNG', async () => {
    const { asset } = await upload(svc.t, svc.account.apiKey, png(300, 300, false), 'image/jpeg', 'misnamed.jpg');
    expect(asset).toMatchObject({ mime: 'image/png', format: 'png', name: 'misnamed.jpg' });
  });

  it('commit takes a name; committing again returns the same asset', async () => {
    const bytes = png(300, 300, false);
    const { ticket, asset } = await upload(svc.t, svc.account.apiKey, bytes, 'image/png', 'x.png', 'Hero shot');
    expect(asset.name).toBe('Hero shot');
    const again = await svc.t.call('POST', `/api/v1/files/${ticket.fileId}/commit`, { key: svc.account.apiKey });
    expectOk(again);
    expect(again.body.data.assetId).toBe(asset.assetId);
  });
});

describe('every rejection of the upload flow, with its message and the balance untouched', () => {
  let t: TestService;
  let apiKey: string;
  let accountId: string;
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    t = await startTestService({ uploadMaxBytes: 1_000_000 }, { clock });
    ({ apiKey, accountId } = await t.account(UNLOCKED));
  });
  afterAll(async () => t?.close());

  const untouched = async () => {
    expect(await t.wallet(accountId)).toEqual({ available: UNLOCKED, held: 0, spent: 0, purchased: UNLOCKED });
    await t.checkLedger(accountId);
  };
  const ticket = async (bytes: Uint8Array, contentType: string, fileName = 'f.bin') => {
    const r = await ticketFor(t, apiKey, { fileName, contentType, size: bytes.byteLength });
    expectOk(r);
    return r.body.data;
  };

  it.each([
    [
      'an undeclared type',
      { fileName: 'x.exe', contentType: 'application/x-msdownload', size: 10 },
      400,
      40011,
      'This file type is not accepted.',
    ],
    [
      'octet-stream without a .safetensors name',
      { fileName: 'x.bin', contentType: 'application/octet-stream', size: 10 },
      400,
      40011,
      'This file type is not accepted.',
    ],
  ])('ticket for %s: 400 40011', async (_name, body, status, code, msg) => {
    const r = await ticketFor(t, apiKey, body);
    expectError(r, status, code);
    expect(r.body.msg).toBe(msg);
    expect(r.body.data).toEqual({ param: 'contentType' });
    await untouched();
  });

  it('ticket: a size above the cap, a missing field, an unknown field: 400 40001 with each problem', async () => {
    const r = await ticketFor(t, apiKey, { fileName: 'big.png', contentType: 'image/png', size: 1_000_001 });
    expectError(r, 400, 40001);
    expect(r.body.data.errors).toEqual([{ path: 'size', rule: 'maximum', message: 'size must be at most 1000000.' }]);
    const r2 = await ticketFor(t, apiKey, { contentType: 'image/png', size: 0, extra: 1 });
    expectError(r2, 400, 40001);
    expect(r2.body.data.errors).toEqual([
      { path: 'extra', rule: 'unknown_field', message: expect.any(String) },
      { path: 'fileName', rule: 'required', message: 'fileName is required.' },
      { path: 'size', rule: 'minimum', message: 'size must be at least 1.' },
    ]);
    await untouched();
  });

  it('a forged signature, an altered expiry, a ticket moved to another file: 400 40010', async () => {
    const bytes = png(300, 300, false);
    const a = await ticket(bytes, 'image/png');
    const b = await ticket(bytes, 'image/png');
    const url = new URL(a.uploadUrl);
    const forged = new URL(url);
    forged.searchParams.set('sig', `${url.searchParams.get('sig')!.slice(0, -2)}AA`);
    const later = new URL(url);
    later.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
    const moved = new URL(url);
    moved.pathname = `/api/v1/uploads/${b.fileId}`;
    const unsigned = new URL(url);
    unsigned.search = '';
    for (const target of [forged, later, moved, unsigned]) {
      const r = await putBytes(target.toString(), bytes, a.headers);
      expectError(r, 400, 40010);
      expect(r.body.msg).toBe('The upload ticket is invalid, expired or already used.');
    }
    // None of them used the ticket up.
    expectOk(await putBytes(a.uploadUrl, bytes, a.headers));
  });

  it('a replayed ticket: the second PUT is 400 40010 and the first bytes stay', async () => {
    const bytes = png(300, 300, false);
    const a = await ticket(bytes, 'image/png');
    expectOk(await putBytes(a.uploadUrl, bytes, a.headers));
    const replay = await putBytes(a.uploadUrl, png(300, 300, true), a.headers);
    expectError(replay, 400, 40010);
    const commit = await t.call('POST', `/api/v1/files/${a.fileId}/commit`, { key: apiKey });
    expectOk(commit);
    expect(commit.body.data.hasAlpha).toBe(false);
  });

  it('an expired ticket: 400 40010', async () => {
    const bytes = png(300, 300, false);
    const a = await ticket(bytes, 'image/png');
    clock.advance(15 * 60_000 + 1000);
    const r = await putBytes(a.uploadUrl, bytes, a.headers);
    expectError(r, 400, 40010);
  });

  it('a Content-Type other than the ticket says: 400 40011, and the ticket still works', async () => {
    const bytes = png(300, 300, false);
    const a = await ticket(bytes, 'image/png');
    const r = await putBytes(a.uploadUrl, bytes, { 'Content-Type': 'image/jpeg' });
    expectError(r, 400, 40011);
    expect(r.body.msg).toBe('This file type is not accepted.');
    expectOk(await putBytes(a.uploadUrl, bytes, a.headers));
  });

  it('bytes that are not of the declared kind (a WAV sent as an image): 400 40011, and commit says not uploaded', async () => {
    const bytes = wav(0.5);
    const a = await ticket(bytes, 'image/png');
    const r = await putBytes(a.uploadUrl, bytes, a.headers);
    expectError(r, 400, 40011);
    expect(r.body.data).toEqual({ param: 'body' });
    const commit = await t.call('POST', `/api/v1/files/${a.fileId}/commit`, { key: apiKey });
    expectError(commit, 400, 40012);
    expect(commit.body.msg).toBe('The file has not been uploaded yet.');
  });

  it('more bytes than the ticket allows: 413 41301 (by Content-Length, before reading)', async () => {
    const bytes = png(300, 300, false);
    const a = await ticket(bytes, 'image/png');
    const r = await putBytes(a.uploadUrl, Buffer.concat([bytes, Buffer.alloc(1000)]), a.headers);
    expectError(r, 413, 41301);
    expect(r.body.msg).toBe('The request body is too large.');
  });

  it('more bytes than the ticket allows, streamed without a length: 413 41301 counted while streaming, and the ticket is used up', async () => {
    const bytes = png(300, 300, false);
    const a = await ticket(bytes, 'image/png');
    const chunks = [bytes, Buffer.alloc(64 * 1024), Buffer.alloc(64 * 1024)];
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next) controller.enqueue(next);
        else controller.close();
      },
    });
    const response = await fetch(a.uploadUrl, {
      method: 'PUT',
      headers: a.headers,
      body,
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
    expect((await response.json()).code).toBe(41301);
    expectError(await putBytes(a.uploadUrl, bytes, a.headers), 400, 40010);
  });

  it('commit before the bytes arrived: 400 40012; an unknown file: 404 40403', async () => {
    const a = await ticket(png(300, 300, false), 'image/png');
    const early = await t.call('POST', `/api/v1/files/${a.fileId}/commit`, { key: apiKey });
    expectError(early, 400, 40012);
    const unknown = await t.call('POST', '/api/v1/files/f_unknown/commit', { key: apiKey });
    expectError(unknown, 404, 40403);
    expect(unknown.body.msg).toBe('File not found.');
    await untouched();
  });

  it('commit from another library (a team key of the same account, another account): 404 40403 like an unknown file', async () => {
    const bytes = png(300, 300, false);
    const a = await ticket(bytes, 'image/png');
    expectOk(await putBytes(a.uploadUrl, bytes, a.headers));
    const team = await t.siblingKey(accountId, 'team:studio');
    const stranger = await t.account(UNLOCKED);
    for (const key of [team, stranger.apiKey]) {
      const r = await t.call('POST', `/api/v1/files/${a.fileId}/commit`, { key });
      expectError(r, 404, 40403);
      expect(r.body.data).toEqual({ param: 'fileId' });
    }
    // A sibling personal key of the same account reaches the same personal library.
    const sibling = await t.siblingKey(accountId);
    expectOk(await t.call('POST', `/api/v1/files/${a.fileId}/commit`, { key: sibling }));
  });

  it('bytes uploaded but never committed are deleted a day after the ticket ran out', async () => {
    const bytes = png(300, 300, false);
    const a = await ticket(bytes, 'image/png');
    expectOk(await putBytes(a.uploadUrl, bytes, a.headers));
    const path = join(t.config.dataDir, 'blobs', 'uploads', a.fileId);
    expect(existsSync(path)).toBe(true);
    clock.advance(15 * 60_000 + 24 * 3600_000 + 1000);
    await expireUploads(t.service.ctx, {} as never);
    expect(existsSync(path)).toBe(false);
    expectError(await t.call('POST', `/api/v1/files/${a.fileId}/commit`, { key: apiKey }), 400, 40012);
  });

  it('a commit copies the bytes to a key of the asset (with the probed extension) and deletes the received object', async () => {
    const bytes = png(120, 80, true);
    const a = await ticket(bytes, 'image/png');
    expectOk(await putBytes(a.uploadUrl, bytes, a.headers));
    const received = join(t.config.dataDir, 'blobs', 'uploads', a.fileId);
    expect(existsSync(received)).toBe(true);
    const committed = await t.call('POST', `/api/v1/files/${a.fileId}/commit`, { key: apiKey });
    expectOk(committed);
    const assetFile = join(t.config.dataDir, 'blobs', 'library', `${committed.body.data.assetId}.png`);
    expect(readFileSync(assetFile).equals(bytes)).toBe(true);
    expect(existsSync(received)).toBe(false);
  });

  it('the upload URL needs no API key and refuses one in the query string', async () => {
    const a = await ticket(png(300, 300, false), 'image/png');
    const r = await putBytes(`${a.uploadUrl}&api_key=${apiKey}`, png(300, 300, false), a.headers);
    expectError(r, 401, 40102);
  });
});

describe('storage plans: locked below the first tier, full at the limit', () => {
  const svc = serviceForSuite();

  it('an account whose owner bought fewer than 1000 credits is locked: ticket and import 403 40302', async () => {
    const { apiKey, accountId } = await svc.t.account(999);
    const r = await ticketFor(svc.t, apiKey, { fileName: 'a.png', contentType: 'image/png', size: 100 });
    expectError(r, 403, 40302);
    // The message names the purchases that unlock storage (spec/storage-plans.yaml's first plan with room) and how far the account is.
    expect(r.body.msg).toBe(
      "Asset storage is locked for this account: it unlocks once the account's credit purchases reach 1000 credits in all (so far 999). Purchase more credits to unlock it.",
    );
    const usage = await svc.t.call('GET', '/api/v1/assets/usage', { key: apiKey });
    expectOk(usage);
    expect(usage.body.data).toMatchObject({
      plan: 'locked',
      unlocked: false,
      usedBytes: 0,
      limitBytes: 0,
      assetCount: 0,
      lifetimePurchasedCredits: 999,
    });
    expect(await svc.t.wallet(accountId)).toEqual({ available: 999, held: 0, spent: 0, purchased: 999 });
  });

  it('lifetime purchases count, not the balance: a spent-down account stays unlocked; a purchase unlocks', async () => {
    const { apiKey, accountId } = await svc.t.account(600);
    expectError(await ticketFor(svc.t, apiKey, { fileName: 'a.png', contentType: 'image/png', size: 100 }), 403, 40302);
    const { addCredits } = await import('../../runtime/accounts/accounts.js');
    await addCredits(svc.t.service.ctx.db, accountId, 400, Date.now());
    expectOk(await ticketFor(svc.t, apiKey, { fileName: 'a.png', contentType: 'image/png', size: 100 }));
    const usage = await svc.t.call('GET', '/api/v1/assets/usage', { key: apiKey });
    expect(usage.body.data).toMatchObject({
      plan: 'basic',
      unlocked: true,
      limitBytes: 1024 ** 3,
      lifetimePurchasedCredits: 1000,
    });
  });

  it('a file that would pass the plan limit: 403 40303 at the ticket and at commit', async () => {
    const { apiKey, accountId } = await svc.t.account(UNLOCKED);
    const bytes = png(300, 300, false);
    const a = (await ticketFor(svc.t, apiKey, { fileName: 'a.png', contentType: 'image/png', size: bytes.length })).body
      .data;
    expectOk(await putBytes(a.uploadUrl, bytes, a.headers));
    // The library fills up between the ticket and the commit.
    await svc.t.service.ctx.db.kysely
      .insertInto('assets')
      .values({
        id: 'a_filler',
        account_id: accountId,
        library: 'personal',
        name: 'filler',
        kind: 'video',
        mime: 'video/mp4',
        format: 'mp4',
        bytes: 1024 ** 3 - 100,
        width: null,
        height: null,
        has_alpha: null,
        duration_seconds: null,
        fps: null,
        blob_key: 'library/none.mp4',
        source: 'upload',
        source_task_id: null,
        created_at: Date.now(),
        deleted_at: null,
      })
      .execute();
    const commit = await svc.t.call('POST', `/api/v1/files/${a.fileId}/commit`, { key: apiKey });
    expectError(commit, 403, 40303);
    expect(commit.body.msg).toBe('Asset storage for this account is full.');
    expectError(await ticketFor(svc.t, apiKey, { fileName: 'b.png', contentType: 'image/png', size: 101 }), 403, 40303);
    // The team library of the same account has its own room.
    const team = await svc.t.siblingKey(accountId, 'team:studio');
    expectOk(await ticketFor(svc.t, team, { fileName: 'b.png', contentType: 'image/png', size: 101 }));
  });
});
