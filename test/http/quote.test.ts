import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../runtime/clock.js';
import { startTestService, type TestService } from '../support/service.js';
import {
  bodyD,
  checkBalance,
  createTask,
  expectError,
  expectOk,
  IMAGE,
  MODEL_D,
  MODEL_MINI,
  PRICE_D,
  usd,
} from './helpers.js';

const quote = (t: TestService, key: string, body: unknown, headers?: Record<string, string>) =>
  t.call('POST', '/api/v1/jobs/quote', { key, body, headers });
const miniAuto = {
  model: MODEL_MINI,
  input: { prompt: 'a city at night, @Image1 as the skyline', reference_image_urls: [IMAGE], duration_seconds: -1 },
};

/** Alters one character of the signature (or of the signed claims) of a quote id. */
function tamper(quoteId: string, part: 'signature' | 'claims'): string {
  const [version, body, signature] = quoteId.split('.');
  if (part === 'signature') return `${version}.${body}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
  const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  claims[3] = claims[3] - 1;
  return `${version}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
}

describe('POST /jobs/quote', () => {
  let t: TestService;
  /** Time moves only when told: tasks stay open (the hold is visible) and quotes can be made to expire. */
  let manual: TestService;
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  beforeAll(async () => {
    [t, manual] = await Promise.all([startTestService(), startTestService({}, { clock })]);
  });
  afterAll(async () => {
    await Promise.all([t?.close(), manual?.close()]);
  });

  it('prices the request: quoteId, expiry in 5 minutes, expected and maximum amounts, breakdown; nothing held, no task', async () => {
    const { accountId, apiKey } = await t.account(100);
    const before = Date.now();
    const r = await quote(t, apiKey, bodyD());
    expectOk(r, 200);
    const q = r.body.data;
    expect(q.quoteId).toEqual(expect.any(String));
    const expiresIn = Date.parse(q.expiresAt) - before;
    expect(expiresIn).toBeGreaterThan(4.5 * 60_000);
    expect(expiresIn).toBeLessThanOrEqual(5.5 * 60_000);
    expect(q).toMatchObject({
      estimatedCredits: PRICE_D,
      estimatedCost: usd(PRICE_D),
      maxCredits: PRICE_D,
      maxCharge: usd(PRICE_D),
      warnings: [],
    });
    expect(q.breakdown).toMatchObject({ rate: '5.55', billableSeconds: 5, options: { resolution: '768p' } });
    await checkBalance(t, accountId, apiKey, { available: 100, held: 0, total: 100 });
    const list = await t.call('GET', '/api/v1/jobs', { key: apiKey });
    expect(list.body.data.items).toEqual([]);
  });

  it('quotes -1 at the expected 5 s and a maximum of 15 s', async () => {
    const { accountId, apiKey } = await t.account(500);
    const r = await quote(t, apiKey, miniAuto);
    expectOk(r, 200);
    expect(r.body.data).toMatchObject({
      estimatedCredits: 40,
      estimatedCost: '0.40',
      maxCredits: 120,
      maxCharge: '1.20',
    });
    expect(r.body.data.breakdown).toMatchObject({ rate: '7.94', billableSeconds: 5, maxBillableSeconds: 15 });
    await checkBalance(t, accountId, apiKey, { available: 500, held: 0 });
  });

  it('warns about a marker with no matching reference and still answers 200', async () => {
    const { apiKey } = await t.account(100);
    const r = await quote(t, apiKey, {
      model: MODEL_MINI,
      input: { prompt: 'put @Image3 in the sky', reference_image_urls: [IMAGE] },
    });
    expectOk(r, 200);
    expect(r.body.data.warnings).toHaveLength(1);
    expect(r.body.data.warnings[0]).toMatchObject({ code: 'marker_unmatched', path: 'input.prompt' });
    expect(r.body.data.warnings[0].message).toContain('@Image3');
  });

  it('translates warnings with Accept-Language', async () => {
    const { apiKey } = await t.account(100);
    const r = await quote(
      t,
      apiKey,
      { model: MODEL_MINI, input: { prompt: 'put @Image3 in the sky', reference_image_urls: [IMAGE] } },
      { 'accept-language': 'de-DE' },
    );
    expectOk(r, 200);
    expect(r.body.data.warnings[0]).toMatchObject({ code: 'marker_unmatched', path: 'input.prompt' });
    expect(r.body.data.warnings[0].message).toMatch(/^Der Prompt verweist auf @Image3/);
  });

  it.each([
    ['a malformed expectedCost', { ...bodyD(), quoteId: 'q1.x.y', expectedCost: '1.234' }, 400, 40001],
    ['a negative expectedCredits', { ...bodyD(), quoteId: 'q1.x.y', expectedCredits: -1 }, 400, 40001],
    ['an unknown input field', { model: MODEL_D, input: { ...bodyD().input, colour: 'red' } }, 400, 40001],
    ['an unknown model', { model: 'vendor_z/none/reference-to-video', input: {} }, 400, 40005],
    ['an invalid callback URL', { ...bodyD(), callBackUrl: 'http://example.com/hook' }, 400, 40002],
  ])('validates as createTask does: %s', async (_name, body, status, code) => {
    const { accountId, apiKey } = await t.account(100);
    expectError(await quote(t, apiKey, body), status, code);
    await checkBalance(t, accountId, apiKey, { available: 100, held: 0 });
  });

  it('answers 402 40201 when the balance does not cover the maximum charge', async () => {
    const { accountId, apiKey } = await t.account(PRICE_D - 1);
    expectError(await quote(t, apiKey, bodyD()), 402, 40201);
    await checkBalance(t, accountId, apiKey, { available: PRICE_D - 1, held: 0 });
  });

  describe('createTask with a quote', () => {
    it('is accepted with the quoted expectedCredits and holds exactly maxCredits', async () => {
      const { accountId, apiKey } = await manual.account(500);
      const q = (await quote(manual, apiKey, miniAuto)).body.data;
      const r = await createTask(manual, apiKey, {
        ...miniAuto,
        quoteId: q.quoteId,
        expectedCredits: q.estimatedCredits,
      });
      expectOk(r, 202);
      expect(r.body.data).toMatchObject({
        state: 'queued',
        maxCredits: q.maxCredits,
        estimatedCredits: q.estimatedCredits,
      });
      await checkBalance(manual, accountId, apiKey, { available: 500 - q.maxCredits, held: q.maxCredits, total: 500 });
    });

    it('is accepted with expectedCost as a USD string', async () => {
      const { accountId, apiKey } = await manual.account(100);
      const q = (await quote(manual, apiKey, bodyD())).body.data;
      const r = await createTask(manual, apiKey, { ...bodyD(), quoteId: q.quoteId, expectedCost: q.estimatedCost });
      expectOk(r, 202);
      await checkBalance(manual, accountId, apiKey, { available: 100 - PRICE_D, held: PRICE_D });
    });

    it.each([
      [
        'expectedCredits differs from the quote',
        async (_t: TestService, _acct: string, _key: string, q: any) => ({
          ...bodyD(),
          quoteId: q.quoteId,
          expectedCredits: q.estimatedCredits + 1,
        }),
      ],
      [
        'expectedCost differs from the quote',
        async (_t: TestService, _acct: string, _key: string, q: any) => ({
          ...bodyD(),
          quoteId: q.quoteId,
          expectedCost: '0.27',
        }),
      ],
      [
        'the quote is for another request',
        async (_t: TestService, _acct: string, _key: string, q: any) => ({
          ...bodyD('another prompt entirely'),
          quoteId: q.quoteId,
          expectedCredits: q.estimatedCredits,
        }),
      ],
      [
        'the quote is for another model',
        async (_t: TestService, _acct: string, _key: string, q: any) => ({
          ...miniAuto,
          quoteId: q.quoteId,
          expectedCredits: q.estimatedCredits,
        }),
      ],
      [
        'the quote was made by a sibling key',
        async (s: TestService, acct: string, _key: string) => {
          const sibling = await s.siblingKey(acct);
          const other = (await quote(s, sibling, bodyD())).body.data;
          return { ...bodyD(), quoteId: other.quoteId, expectedCredits: other.estimatedCredits };
        },
      ],
      [
        'the quote was made by another account',
        async (s: TestService) => {
          const other = await s.account(100);
          const q = (await quote(s, other.apiKey, bodyD())).body.data;
          return { ...bodyD(), quoteId: q.quoteId, expectedCredits: q.estimatedCredits };
        },
      ],
      [
        'the signature was tampered with',
        async (_t: TestService, _acct: string, _key: string, q: any) => ({
          ...bodyD(),
          quoteId: tamper(q.quoteId, 'signature'),
          expectedCredits: q.estimatedCredits,
        }),
      ],
      [
        'the signed claims were tampered with',
        async (_t: TestService, _acct: string, _key: string, q: any) => ({
          ...bodyD(),
          quoteId: tamper(q.quoteId, 'claims'),
          expectedCredits: q.estimatedCredits - 1,
        }),
      ],
      [
        'the quote id is not a quote',
        async (_t: TestService, _acct: string, _key: string, q: any) => ({
          ...bodyD(),
          quoteId: 'q1.nothing',
          expectedCredits: q.estimatedCredits,
        }),
      ],
    ])('is 409 40901 when %s, with nothing held', async (_name, build) => {
      const { accountId, apiKey } = await t.account(100);
      const q = (await quote(t, apiKey, bodyD())).body.data;
      const body = await build(t, accountId, apiKey, q);
      expectError(await createTask(t, apiKey, body), 409, 40901);
      await checkBalance(t, accountId, apiKey, { available: 100, held: 0, total: 100 });
      expect((await t.call('GET', '/api/v1/jobs', { key: apiKey })).body.data.items).toEqual([]);
    });

    it.each([
      ['quoteId without expectedCredits or expectedCost', (q: any) => ({ ...bodyD(), quoteId: q.quoteId })],
      ['expectedCredits without quoteId', (q: any) => ({ ...bodyD(), expectedCredits: q.estimatedCredits })],
    ])('is 400 40015 for %s', async (_name, build) => {
      const { accountId, apiKey } = await t.account(100);
      const q = (await quote(t, apiKey, bodyD())).body.data;
      expectError(await createTask(t, apiKey, build(q)), 400, 40015);
      await checkBalance(t, accountId, apiKey, { available: 100, held: 0 });
    });

    it('is accepted just before the 5 minutes run out and refused with 409 40901 after', async () => {
      const a = await manual.account(100);
      const b = await manual.account(100);
      const early = (await quote(manual, a.apiKey, bodyD())).body.data;
      const late = (await quote(manual, b.apiKey, bodyD())).body.data;
      expect(Date.parse(late.expiresAt)).toBe(clock.now() + 5 * 60_000);
      clock.advance(5 * 60_000 - 1_000);
      expectOk(
        await createTask(manual, a.apiKey, {
          ...bodyD(),
          quoteId: early.quoteId,
          expectedCredits: early.estimatedCredits,
        }),
        202,
      );
      await checkBalance(manual, a.accountId, a.apiKey, { available: 100 - PRICE_D, held: PRICE_D });
      clock.advance(2_000);
      const r = await createTask(manual, b.apiKey, {
        ...bodyD(),
        quoteId: late.quoteId,
        expectedCredits: late.estimatedCredits,
      });
      expectError(r, 409, 40901);
      await checkBalance(manual, b.accountId, b.apiKey, { available: 100, held: 0, total: 100 });
      // A fresh quote for the same request is honoured again.
      const fresh = (await quote(manual, b.apiKey, bodyD())).body.data;
      expectOk(
        await createTask(manual, b.apiKey, {
          ...bodyD(),
          quoteId: fresh.quoteId,
          expectedCredits: fresh.estimatedCredits,
        }),
        202,
      );
      await checkBalance(manual, b.accountId, b.apiKey, { total: 100 });
    });

    it('does not stand in the way of an Idempotency-Key replay, even once the quote has expired', async () => {
      const { accountId, apiKey } = await manual.account(100);
      const q = (await quote(manual, apiKey, bodyD())).body.data;
      const body = { ...bodyD(), quoteId: q.quoteId, expectedCredits: q.estimatedCredits };
      const headers = { 'idempotency-key': 'quoted-order' };
      const first = await createTask(manual, apiKey, body, { headers });
      expectOk(first, 202);
      clock.advance(5 * 60_000 + 1_000);
      const replay = await createTask(manual, apiKey, body, { headers });
      expect(replay.status, JSON.stringify(replay.body)).toBe(202);
      expect(replay.body.data.taskId).toBe(first.body.data.taskId);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      const holds = await manual.service.ctx.db.kysely
        .selectFrom('holds')
        .select('task_id')
        .where('account_id', '=', accountId)
        .execute();
      expect(holds).toEqual([{ task_id: first.body.data.taskId }]);
      await checkBalance(manual, accountId, apiKey);
      // A new request with the expired quote is still refused.
      expectError(
        await createTask(manual, apiKey, body, { headers: { 'idempotency-key': 'another-order' } }),
        409,
        40901,
      );
      expectError(await createTask(manual, apiKey, body), 409, 40901);
      // The refused request left no trace: its Idempotency-Key is free for a request with a fresh quote.
      const fresh = (await quote(manual, apiKey, bodyD())).body.data;
      const second = await createTask(
        manual,
        apiKey,
        { ...bodyD(), quoteId: fresh.quoteId, expectedCredits: fresh.estimatedCredits },
        { headers: { 'idempotency-key': 'another-order' } },
      );
      expectOk(second, 202);
      expect(second.body.data.taskId).not.toBe(first.body.data.taskId);
      await checkBalance(manual, accountId, apiKey);
    });
  });
});
