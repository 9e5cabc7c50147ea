import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORAGE_PLANS } from '../../generated/storage-plans.js';
import { ManualClock } from '../../runtime/clock.js';
import { expireUploads } from '../../runtime/files/cleanup.js';
import { expectError, expectOk } from '../http/helpers.js';
import { startTestService, type TestService } from '../support/service.js';
import { png } from '../../support/media/fixtures.js';
import { putBytes, ticketFor, UNLOCKED } from './support.js';

/** The plan UNLOCKED buys (spec/storage-plans.yaml): the smallest one with room. */
const PLAN = STORAGE_PLANS.find((p) => p.limitBytes > 0)!;
const TICKET = 100 * 1000 * 1000;
/** How many tickets of TICKET bytes the plan holds. */
const FITS = Math.floor(PLAN.limitBytes / TICKET);

describe('upload tickets reserve their declared size against the plan (manual clock)', () => {
  let t: TestService;
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    t = await startTestService({ uploadMaxBytes: TICKET }, { clock });
    expect(FITS).toBeGreaterThan(2);
  });
  afterAll(async () => t?.close());

  const usage = async (key: string) => (await t.call('GET', '/api/v1/assets/usage', { key })).body.data;
  const ticket = (key: string, size: number, fileName = 'clip.mp4', contentType = 'video/mp4') =>
    ticketFor(t, key, { fileName, contentType, size });

  it('tickets fill the plan one by one; the one that would pass it is 403 40303 storage_full, and usage shows the reservation', async () => {
    const { apiKey } = await t.account(UNLOCKED);
    for (let i = 0; i < FITS; i++) expectOk(await ticket(apiKey, TICKET));
    const refused = await ticket(apiKey, TICKET);
    expectError(refused, 403, 40303);
    expect(await usage(apiKey)).toMatchObject({
      plan: PLAN.name,
      usedBytes: FITS * TICKET,
      reservedBytes: FITS * TICKET,
      assetCount: 0,
      limitBytes: PLAN.limitBytes,
    });
    // What is left still fits, to the byte.
    const rest = PLAN.limitBytes - FITS * TICKET;
    expectOk(await ticket(apiKey, rest));
    expectError(await ticket(apiKey, 1), 403, 40303);
    expect(await usage(apiKey)).toMatchObject({ usedBytes: PLAN.limitBytes, reservedBytes: PLAN.limitBytes });
  });

  it('concurrent ticket requests cannot overbook: of many at once, only what the plan holds is granted', async () => {
    const { apiKey } = await t.account(UNLOCKED);
    const answers = await Promise.all(Array.from({ length: FITS + 4 }, () => ticket(apiKey, TICKET)));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(FITS);
    for (const r of answers.filter((a) => a.status !== 200)) expectError(r, 403, 40303);
    expect(await usage(apiKey)).toMatchObject({ reservedBytes: FITS * TICKET });
  });

  it('once the tickets expire unused the room comes back', async () => {
    const { apiKey } = await t.account(UNLOCKED);
    for (let i = 0; i < FITS; i++) expectOk(await ticket(apiKey, TICKET));
    expectError(await ticket(apiKey, TICKET), 403, 40303);
    clock.advance(t.config.uploadTicketTtlSeconds * 1000 + 1000);
    expect(await usage(apiKey)).toMatchObject({ usedBytes: 0, reservedBytes: 0 });
    expectOk(await ticket(apiKey, TICKET));
    expect(await usage(apiKey)).toMatchObject({ usedBytes: TICKET, reservedBytes: TICKET });
  });

  it('received bytes stay reserved until committed, then count once, as the asset', async () => {
    const { apiKey } = await t.account(UNLOCKED);
    const bytes = png(300, 200, false);
    const declared = bytes.length + 5000;
    const r = await ticket(apiKey, declared, 'still.png', 'image/png');
    expectOk(r);
    expect(await usage(apiKey)).toMatchObject({ usedBytes: declared, reservedBytes: declared });
    expectOk(await putBytes(r.body.data.uploadUrl, bytes, r.body.data.headers));
    // What arrived is held now (it can still be committed), even past the ticket's expiry.
    clock.advance(t.config.uploadTicketTtlSeconds * 1000 + 1000);
    expect(await usage(apiKey)).toMatchObject({ usedBytes: bytes.length, reservedBytes: bytes.length, assetCount: 0 });
    expectOk(await t.call('POST', `/api/v1/files/${r.body.data.fileId}/commit`, { key: apiKey }));
    expect(await usage(apiKey)).toMatchObject({ usedBytes: bytes.length, reservedBytes: 0, assetCount: 1 });
  });

  it('an upload never committed holds its room until the cleanup removes its bytes', async () => {
    const { apiKey } = await t.account(UNLOCKED);
    const bytes = png(200, 200, false);
    const r = await ticket(apiKey, bytes.length, 'left.png', 'image/png');
    expectOk(await putBytes(r.body.data.uploadUrl, bytes, r.body.data.headers));
    expect(await usage(apiKey)).toMatchObject({ reservedBytes: bytes.length });
    clock.advance(t.config.uploadTicketTtlSeconds * 1000 + 25 * 3600 * 1000);
    await expireUploads(t.service.ctx, {} as never);
    expect(await usage(apiKey)).toMatchObject({ usedBytes: 0, reservedBytes: 0 });
    expectError(await t.call('POST', `/api/v1/files/${r.body.data.fileId}/commit`, { key: apiKey }), 400, 40012);
  });
});
