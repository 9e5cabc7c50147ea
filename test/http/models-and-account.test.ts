import { catalogue } from '../../generated/catalogue.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';
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

const FAIL = 'FAIL-THIS-PROMPT';
const mini = (prompt: string) => ({
  model: MODEL_MINI,
  input: { prompt, reference_image_urls: [IMAGE], duration_seconds: -1 },
});

describe('GET /jobs', () => {
  let t: TestService;
  let owner: { accountId: string; apiKey: string };
  let sibling: string;
  /** Task ids of the owner's key in creation order, and their final records. */
  const mine: string[] = [];
  const finals = new Map<string, any>();
  const theirs: string[] = [];

  beforeAll(async () => {
    t = await startTestService({ simulatorFailWhenPromptContains: FAIL });
    owner = await t.account(2_000);
    sibling = await t.siblingKey(owner.accountId);
    const bodies = [
      bodyD('one'),
      bodyD(`two ${FAIL}`),
      mini('three @Image1'),
      bodyD('four'),
      bodyD(`five ${FAIL}`),
      mini('six @Image1'),
      bodyD('seven'),
    ];
    for (const body of bodies) {
      const r = await createTask(t, owner.apiKey, body);
      expect(r.status).toBe(202);
      mine.push(r.body.data.taskId);
    }
    for (const prompt of ['sibling one', 'sibling two'])
      theirs.push((await createTask(t, sibling, bodyD(prompt))).body.data.taskId);
    for (const id of mine) finals.set(id, await waitForTerminal(t, owner.apiKey, id));
    for (const id of theirs) await waitForTerminal(t, sibling, id);
  });
  afterAll(async () => {
    await t?.close();
  });

  it("lists only the calling key's tasks, newest first", async () => {
    const r = await t.call('GET', '/api/v1/jobs?limit=100', { key: owner.apiKey });
    expectOk(r);
    expect(r.headers.get('cache-control')).toBe('no-store');
    const items = r.body.data.items as any[];
    expect(items.map((i) => i.taskId).sort()).toEqual([...mine].sort());
    for (let i = 1; i < items.length; i++)
      expect(Date.parse(items[i - 1].createdAt)).toBeGreaterThanOrEqual(Date.parse(items[i].createdAt));
    // Creation order, reversed, wherever the creation times differ.
    const position = (id: string) => items.findIndex((i) => i.taskId === id);
    for (let i = 1; i < mine.length; i++) {
      if (finals.get(mine[i]).createdAt !== finals.get(mine[i - 1]).createdAt)
        expect(position(mine[i])).toBeLessThan(position(mine[i - 1]));
    }
    expect(r.body.data.nextCursor).toBeNull();
    const theirList = await t.call('GET', '/api/v1/jobs', { key: sibling });
    expect(theirList.body.data.items.map((i: any) => i.taskId).sort()).toEqual([...theirs].sort());
  });

  it('pages with limit and nextCursor through every task exactly once', async () => {
    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `limit=3&cursor=${encodeURIComponent(cursor)}` : 'limit=3';
      const r = await t.call('GET', `/api/v1/jobs?${query}`, { key: owner.apiKey });
      expectOk(r);
      sizes.push(r.body.data.items.length);
      seen.push(...r.body.data.items.map((i: any) => i.taskId));
      cursor = r.body.data.nextCursor;
    } while (cursor);
    expect(sizes).toEqual([3, 3, 1]);
    expect(seen).toHaveLength(mine.length);
    expect(new Set(seen)).toEqual(new Set(mine));
    const all = await t.call('GET', '/api/v1/jobs?limit=100', { key: owner.apiKey });
    expect(seen).toEqual(all.body.data.items.map((i: any) => i.taskId));
  });

  it.each([
    ['state=failed', 'state=failed', (f: any) => f.state === 'failed'],
    ['state=succeeded', 'state=succeeded', (f: any) => f.state === 'succeeded'],
    ['state=queued', 'state=queued', () => false],
    ['model', `model=${encodeURIComponent(MODEL_MINI)}`, (f: any) => f.model === MODEL_MINI],
    [
      'state and model',
      `state=succeeded&model=${encodeURIComponent(MODEL_D)}`,
      (f: any) => f.state === 'succeeded' && f.model === MODEL_D,
    ],
  ])('filters by %s', async (_name, query, keep) => {
    const r = await t.call('GET', `/api/v1/jobs?limit=100&${query}`, { key: owner.apiKey });
    expectOk(r);
    const expected = mine.filter((id) => keep(finals.get(id)));
    expect(r.body.data.items.map((i: any) => i.taskId).sort()).toEqual(expected.sort());
  });

  it.each([['limit=0'], ['limit=101'], ['limit=abc'], ['limit=2.5'], ['state=done'], ['cursor=%%%']])(
    '%s is 400 40008',
    async (query) => {
      expectError(await t.call('GET', `/api/v1/jobs?${query}`, { key: owner.apiKey }), 400, 40008);
    },
  );

  describe('GET /usage', () => {
    it("reports the key's settled credits by day and by model", async () => {
      const r = await t.call('GET', '/api/v1/usage', { key: owner.apiKey });
      expectOk(r);
      const records = mine.map((id) => finals.get(id));
      const charged = (list: any[]) => list.filter((f) => f.state === 'succeeded').reduce((a, f) => a + f.credits, 0);
      const total = charged(records);
      expect(total).toBeGreaterThan(3 * PRICE_D);
      const days = r.body.data.byDay as any[];
      expect(days.reduce((a, d) => a + d.credits, 0)).toBe(total);
      expect(days.reduce((a, d) => a + d.tasks, 0)).toBe(mine.length);
      for (const d of days) expect(d.cost).toBe(usd(d.credits));
      expect(days.map((d) => d.day)).toContain(finals.get(mine[0]).createdAt.slice(0, 10));
      const byModel = Object.fromEntries((r.body.data.byModel as any[]).map((m) => [m.model, m]));
      expect(Object.keys(byModel).sort()).toEqual([MODEL_MINI, MODEL_D].sort());
      for (const model of [MODEL_D, MODEL_MINI]) {
        const ofModel = records.filter((f) => f.model === model);
        expect(byModel[model]).toMatchObject({
          tasks: ofModel.length,
          credits: charged(ofModel),
          cost: usd(charged(ofModel)),
        });
      }
      // The money agrees: what usage reports as charged is what the wallet spent (the sibling's two tasks aside).
      const balance = await checkBalance(t, owner.accountId, owner.apiKey, { held: 0 });
      expect(balance.spent).toBe(total + 2 * PRICE_D);
      const theirUsage = await t.call('GET', '/api/v1/usage', { key: sibling });
      expect(theirUsage.body.data.byModel).toEqual([
        { model: MODEL_D, tasks: 2, credits: 2 * PRICE_D, cost: usd(2 * PRICE_D) },
      ]);
    });

    it.each([['from=yesterday'], ['from=2026-02-30'], ['from=2030-01-02&to=2030-01-01']])(
      '%s is 400 40008',
      async (query) => {
        expectError(await t.call('GET', `/api/v1/usage?${query}`, { key: owner.apiKey }), 400, 40008);
      },
    );
  });
});

describe('GET /models', () => {
  let t: TestService;
  let key: string;
  beforeAll(async () => {
    t = await startTestService();
    key = (await t.account(0)).apiKey;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('lists every callable model (the 17 reference-to-video ones among them) with prices and the 5 s minimum, without schemas', async () => {
    const r = await t.call('GET', '/api/v1/models', { key });
    expectOk(r);
    const items = r.body.data.items as any[];
    expect(items).toHaveLength(catalogue.size);
    expect(new Set(items.map((m) => m.id)).size).toBe(catalogue.size);
    expect(items.filter((m) => m.mode === 'reference-to-video')).toHaveLength(17);
    for (const m of items) {
      expect(m.id).toMatch(
        /^vendor_[a-e]\/[^/]+\/(text-to-video|image-to-video|reference-to-video|video-extend|video-edit)$/,
      );
      expect(m.pricing.rates.length).toBeGreaterThan(0);
      expect(Number.isInteger(m.pricing.minimumFor5sCredits)).toBe(true);
      expect(m.inputSchema).toBeUndefined();
    }
    const d = items.find((m) => m.id === MODEL_D);
    expect(d.pricing.minimumFor5sCredits).toBe(28);
    expect(d.pricing.rates).toContainEqual(expect.objectContaining({ options: { resolution: '768p' }, rate: '5.55' }));
    expect(items.find((m) => m.id === MODEL_MINI).pricing.minimumFor5sCredits).toBe(9);
  });

  it.each([['includeSchema=1'], ['includeSchema=true']])('%s adds each input schema', async (query) => {
    const r = await t.call('GET', `/api/v1/models?${query}`, { key });
    expectOk(r);
    expect(r.body.data.items).toHaveLength(catalogue.size);
    for (const m of r.body.data.items)
      expect(m.inputSchema).toMatchObject({ type: 'object', properties: expect.any(Object) });
  });

  it.each([
    ['the encoded id', encodeURIComponent(MODEL_D)],
    ['the plain path', MODEL_D],
  ])('GET /models/{model} answers one model with its schema (%s)', async (_name, path) => {
    const r = await t.call('GET', `/api/v1/models/${path}`, { key });
    expectOk(r);
    expect(r.body.data).toMatchObject({ id: MODEL_D, pricing: { minimumFor5sCredits: 28 } });
    expect(r.body.data.inputSchema.properties.duration_seconds).toBeDefined();
  });

  it.each([
    ['an unknown encoded id', encodeURIComponent('vendor_z/none/reference-to-video')],
    ['an unknown plain path', 'vendor_z/none/reference-to-video'],
    ['a bare word', 'nothing'],
  ])('%s is 404 40406', async (_name, path) => {
    expectError(await t.call('GET', `/api/v1/models/${path}`, { key }), 404, 40406);
  });
});

describe('GET /chat/credit', () => {
  let slow: TestService;
  beforeAll(async () => {
    slow = await startTestService({ simulatorLatencyMs: 600_000 });
  });
  afterAll(async () => {
    await slow?.close();
  });

  it('reports available, held and total in credits and USD while a task is held', async () => {
    const { accountId, apiKey } = await slow.account(1_234);
    const fresh = await slow.call('GET', '/api/v1/chat/credit', { key: apiKey });
    expectOk(fresh);
    expect(fresh.headers.get('cache-control')).toBe('no-store');
    expect(fresh.body.data).toEqual({
      available: 1234,
      held: 0,
      total: 1234,
      availableCost: '12.34',
      heldCost: '0.00',
      totalCost: '12.34',
    });
    expectOk(await createTask(slow, apiKey, bodyD()), 202);
    expectOk(await createTask(slow, apiKey, mini('a hold of 15 s @Image1')), 202);
    const r = await slow.call('GET', '/api/v1/chat/credit', { key: apiKey });
    expect(r.body.data).toEqual({
      available: 1234 - 28 - 120,
      held: 148,
      total: 1234,
      availableCost: '10.86',
      heldCost: '1.48',
      totalCost: '12.34',
    });
    await checkBalance(slow, accountId, apiKey, { available: 1086, held: 148, total: 1234, spent: 0 });
    // A sibling key sees the same shared wallet.
    const sibling = await slow.siblingKey(accountId);
    expect((await slow.call('GET', '/api/v1/chat/credit', { key: sibling })).body.data).toEqual(r.body.data);
  });
});
