import { storedRows } from '../support/stored-rows.js';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { revokeKey } from '../../runtime/accounts/accounts.js';
import type { TestService } from '../support/service.js';
import { serviceForSuite } from '../support/suite-service.js';
import { bodyD, checkBalance, createTask, expectError, expectOk } from './helpers.js';

/** The messages of spec/errors.yaml, the source of truth for every language. */
const catalogue = parse(readFileSync(new URL('../../spec/errors.yaml', import.meta.url), 'utf8')) as {
  codes: Record<string, { messages: Record<string, string> }>;
};
const message = (code: number, language: string) => catalogue.codes[String(code)].messages[language];

async function keyIdOf(t: TestService, accountId: string): Promise<string[]> {
  return (await storedRows(t, 'api_keys', { account_id: accountId }, 'created_at')).map((r) => r.id);
}

describe('authentication', () => {
  const svc = serviceForSuite();

  it.each([
    ['no Authorization header', undefined],
    ['a malformed Bearer value', 'Bearer xyz'],
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['Bearer with nothing after it', 'Bearer '],
    ['an unknown key of the right shape', 'Bearer sk-service-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
  ])('%s is 401 40101', async (_name, authorization) => {
    const { accountId, apiKey } = await svc.t.account(100);
    const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
    for (const [method, path, body] of [
      ['POST', '/api/v1/jobs/createTask', bodyD()],
      ['GET', '/api/v1/chat/credit', undefined],
      ['GET', '/api/v1/jobs', undefined],
      ['GET', '/api/v1/models', undefined],
    ] as const) {
      const r = await svc.t.call(method, path, { headers, body });
      expectError(r, 401, 40101);
      expect(r.body.msg).toBe(message(40101, 'en'));
    }
    await checkBalance(svc.t, accountId, apiKey, { available: 100, held: 0 });
  });

  it.each([
    ['api_key', (key: string) => `api_key=${key}`],
    ['token', (key: string) => `token=${key}`],
    ['a key under any name', (key: string) => `note=${key}`],
  ])('a key in the query string (%s) is 401 40102, even with a valid header key', async (_name, query) => {
    const { accountId, apiKey } = await svc.t.account(100);
    const create = await svc.t.call('POST', `/api/v1/jobs/createTask?${query(apiKey)}`, { key: apiKey, body: bodyD() });
    expectError(create, 401, 40102);
    expect(create.body.msg).toBe(message(40102, 'en'));
    expectError(await svc.t.call('GET', `/api/v1/chat/credit?${query(apiKey)}`, { key: apiKey }), 401, 40102);
    expectError(await svc.t.call('GET', `/api/v1/chat/credit?${query(apiKey)}`), 401, 40102);
    await checkBalance(svc.t, accountId, apiKey, { available: 100, held: 0 });
  });

  it('a revoked key is 401 40101 and its sibling keeps working', async () => {
    const { accountId, apiKey } = await svc.t.account(100);
    const sibling = await svc.t.siblingKey(accountId);
    const [, siblingId] = await keyIdOf(svc.t, accountId);
    // Revoked before its first use: no cached lookup can vouch for it.
    expect(await revokeKey(svc.t.service.ctx.db, siblingId, Date.now())).toBe(true);
    expectError(await svc.t.call('GET', '/api/v1/chat/credit', { key: sibling }), 401, 40101);
    expectError(await createTask(svc.t, sibling, bodyD()), 401, 40101);
    expectOk(await svc.t.call('GET', '/api/v1/chat/credit', { key: apiKey }));
    await checkBalance(svc.t, accountId, apiKey, { available: 100, held: 0 });
  });

  it('a key revoked while in use is refused on the very next request (the cache is dropped on revocation)', async () => {
    const { accountId, apiKey } = await svc.t.account(100);
    expectOk(await svc.t.call('GET', '/api/v1/chat/credit', { key: apiKey }));
    const [keyId] = await keyIdOf(svc.t, accountId);
    await revokeKey(svc.t.service.ctx.db, keyId, Date.now());
    expectError(await svc.t.call('GET', '/api/v1/chat/credit', { key: apiKey }), 401, 40101);
  });
});

describe('error languages', () => {
  const svc = serviceForSuite();

  const badCallback = { ...bodyD(), callBackUrl: 'http://example.com/hook' };

  it.each([
    ['no header, no account setting', null, undefined, 'en'],
    ['de', null, 'de', 'de'],
    ['a regional variant de-DE', null, 'de-DE', 'de'],
    ['a regional variant fr-CA', null, 'fr-CA', 'fr'],
    ['pt (alias of pt-BR)', null, 'pt', 'pt-BR'],
    ['zh-Hant', null, 'zh-Hant', 'zh-TW'],
    ['q-values: the highest recognized wins', null, 'xx;q=1, fr;q=0.5, de;q=0.9', 'de'],
    ['an unsupported language only', null, 'tlh', 'en'],
    ['account fr, no header', 'fr', undefined, 'fr'],
    ['account fr, header de: the header wins', 'fr', 'de-AT', 'de'],
    ['account fr, unsupported header: the account setting', 'fr', 'tlh', 'fr'],
    ['account ja, header en', 'ja', 'en-US', 'en'],
  ])('%s', async (_name, accountLanguage, header, expected) => {
    const { accountId, apiKey } = await svc.t.account(100, accountLanguage ?? undefined);
    const headers = header === undefined ? undefined : { 'accept-language': header };
    const invalidUrl = await createTask(svc.t, apiKey, badCallback, { headers });
    expectError(invalidUrl, 400, 40002);
    expect(invalidUrl.body.msg).toBe(message(40002, expected));
    const unknown = await svc.t.call('GET', '/api/v1/jobs/recordInfo?taskId=task_nothing00000000', {
      key: apiKey,
      headers,
    });
    expectError(unknown, 404, 40401);
    expect(unknown.body.msg).toBe(message(40401, expected));
    await checkBalance(svc.t, accountId, apiKey, { available: 100, held: 0 });
  });

  it('validation problems are translated too, with paths and rules unchanged', async () => {
    const { apiKey } = await svc.t.account(100);
    const body = bodyD(undefined, { duration_seconds: 99 });
    const en = await createTask(svc.t, apiKey, body);
    const de = await createTask(svc.t, apiKey, body, { headers: { 'accept-language': 'de-DE' } });
    expectError(en, 400, 40001);
    expectError(de, 400, 40001);
    expect(de.body.msg).toBe(message(40001, 'de'));
    expect(de.body.data.errors.map((e: any) => [e.path, e.rule])).toEqual(
      en.body.data.errors.map((e: any) => [e.path, e.rule]),
    );
    expect(de.body.data.errors[0].message).not.toBe(en.body.data.errors[0].message);
  });

  it('codes never change with the language', async () => {
    const { apiKey } = await svc.t.account(100);
    const languages = ['en', 'zh-CN', 'zh-TW', 'ja', 'ko', 'de', 'fr', 'es', 'pt-BR', 'ru', 'it', 'pl'];
    for (const language of languages) {
      const r = await createTask(svc.t, apiKey, badCallback, { headers: { 'accept-language': language } });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe(40002);
      expect(r.body.msg).toBe(message(40002, language));
      const missing = await svc.t.call('GET', '/api/v1/chat/credit', { headers: { 'accept-language': language } });
      expect([missing.status, missing.body.code, missing.body.msg]).toEqual([401, 40101, message(40101, language)]);
      const route = await svc.t.call('GET', '/api/v1/nowhere', {
        key: apiKey,
        headers: { 'accept-language': language },
      });
      expect([route.status, route.body.code, route.body.msg]).toEqual([404, 40404, message(40404, language)]);
    }
  });
});

describe('rate limit', () => {
  const svc = serviceForSuite(undefined, { rateLimitPerMinute: 3 });

  it('the 4th call in a minute is 429 42901 with Retry-After and X-RateLimit-* headers; other keys are unaffected', async () => {
    const { accountId, apiKey } = await svc.t.account(100);
    const other = await svc.t.account(100);
    const remaining: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await svc.t.call('GET', '/api/v1/chat/credit', { key: apiKey });
      expectOk(r);
      expect(r.headers.get('x-ratelimit-limit')).toBe('3');
      remaining.push(Number(r.headers.get('x-ratelimit-remaining')));
    }
    expect(remaining).toEqual([2, 1, 0]);
    const limited = await createTask(svc.t, apiKey, bodyD());
    expectError(limited, 429, 42901);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('x-ratelimit-limit')).toBe('3');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    // Nothing was held by the refused create (read straight from the wallet: the API is rate limited).
    expect(await svc.t.wallet(accountId)).toMatchObject({ available: 100, held: 0, spent: 0 });
    await svc.t.checkLedger(accountId);
    expectOk(await svc.t.call('GET', '/api/v1/chat/credit', { key: other.apiKey }));
  });
});
