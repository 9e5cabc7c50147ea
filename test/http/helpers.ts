import { expect } from 'vitest';
import type { HttpResult, TestService } from '../support/service.js';
import { referenceUrl } from '../support/reference-url.js';

/** family_d at the defaults (768p, 5 s): 5.55 credits/s -> 28 credits, held and charged alike. */
export const MODEL_D = 'vendor_d/family_d/reference-to-video';
export const PRICE_D = 28;
/** family_a-2.0-mini: duration 4..15 or -1 (the model chooses; held at 15 s). */
export const MODEL_MINI = 'vendor_a/family_a-2.0-mini/reference-to-video';

/** A customer's image on the run's loopback reference host: a real PNG a service that fetches references can measure. */
export const IMAGE = referenceUrl('/a.png');

export function inputD(
  prompt = 'a red fox running through snow, Picture 1 as the fox',
  extra: Record<string, unknown> = {},
) {
  return { prompt, reference_image_urls: [IMAGE], ...extra };
}

export function bodyD(prompt?: string, extra: Record<string, unknown> = {}) {
  return { model: MODEL_D, input: inputD(prompt, extra) };
}

/** family_a-2.0-mini with one reference image and the duration given (-1: the model chooses). */
export function bodyMini(durationSeconds: number) {
  return {
    model: MODEL_MINI,
    input: {
      prompt: 'a slow pan across a city, @Image1 as the skyline',
      reference_image_urls: [IMAGE],
      duration_seconds: durationSeconds,
    },
  };
}

export function createTask(
  t: TestService,
  key: string,
  body: unknown,
  options: { query?: string; headers?: Record<string, string> } = {},
): Promise<HttpResult> {
  return t.call('POST', `/api/v1/jobs/createTask${options.query ? `?${options.query}` : ''}`, {
    key,
    body,
    headers: options.headers,
  });
}

export function recordInfo(
  t: TestService,
  key: string,
  taskId: string,
  headers?: Record<string, string>,
): Promise<HttpResult> {
  return t.call('GET', `/api/v1/jobs/recordInfo?taskId=${encodeURIComponent(taskId)}`, { key, headers });
}

export interface Balance {
  available: number;
  held: number;
  total: number;
  spent: number;
  purchased: number;
}

/**
 * The balance as the API reports it, checked against the wallet and the ledger:
 * total = available + held (over HTTP), the same figures in the database, purchased =
 * available + held + spent (nothing created or lost), and the ledger rows agree.
 * Tasks may resolve in the background, so the HTTP read is bracketed by two wallet reads
 * and repeated until nothing moved in between.
 */
export async function checkBalance(
  t: TestService,
  accountId: string,
  key: string,
  want?: Partial<Balance>,
): Promise<Balance> {
  for (let attempt = 0; ; attempt++) {
    const before = await t.wallet(accountId);
    const r = await t.call('GET', '/api/v1/chat/credit', { key });
    const after = await t.wallet(accountId);
    expect(r.status).toBe(200);
    expect(r.body.code).toBe(200);
    const d = r.body.data;
    expect(d.total).toBe(d.available + d.held);
    expect(d.availableCost).toBe(usd(d.available));
    expect(d.heldCost).toBe(usd(d.held));
    expect(d.totalCost).toBe(usd(d.total));
    expect(after.available).toBeGreaterThanOrEqual(0);
    expect(after.held).toBeGreaterThanOrEqual(0);
    expect(after.purchased).toBe(after.available + after.held + after.spent);
    const stable = before.available === after.available && before.held === after.held && before.spent === after.spent;
    if (!stable && attempt < 20) continue;
    expect({ available: d.available, held: d.held }).toEqual({ available: after.available, held: after.held });
    await t.checkLedger(accountId);
    const balance: Balance = {
      available: d.available,
      held: d.held,
      total: d.total,
      spent: after.spent,
      purchased: after.purchased,
    };
    if (want) expect(balance).toMatchObject(want);
    return balance;
  }
}

/** Integer credits as the USD decimal string of the API (1 credit = 0.01 USD). */
export function usd(credits: number): string {
  return `${Math.floor(credits / 100)}.${String(credits % 100).padStart(2, '0')}`;
}

/** The envelope of an error: status, business code, a msg, a request id echoed in X-Request-Id. */
export function expectError(r: HttpResult, status: number, code: number) {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body).toMatchObject({ code, msg: expect.any(String), request_id: expect.any(String) });
  expect(r.body.msg.length).toBeGreaterThan(0);
  expect(r.headers.get('x-request-id')).toBe(r.body.request_id);
}

/** A 2xx envelope: code 200 and the request id in the header. */
export function expectOk(r: HttpResult, status = 200) {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body.code).toBe(200);
  expect(r.headers.get('x-request-id')).toBe(r.body.request_id);
}
