import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, revokeKey } from '../../runtime/accounts/accounts.js';
import { codeMessage } from '../../generated/errors.js';
import { ManualClock } from '../../runtime/clock.js';
import { bodyD, createTask, expectError, PRICE_D, recordInfo } from '../http/helpers.js';
import { startTestService, type TestService } from '../support/service.js';
import { GatedDeployment, recordCounts } from './support.js';

/** Hostile callers: keys in the wrong place or form, revoked keys, siblings, forged quotes, altered links. */
const counts: Record<string, number> = { cases: 0, violations: 0 };
const stripId = (body: any) => ({ ...body, request_id: undefined });

describe('hostile callers', () => {
  let t: TestService;
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const gate = new GatedDeployment(() => clock.now());
  let owner: { accountId: string; apiKey: string };
  let sibling: string;
  let taskId: string;
  beforeAll(async () => {
    t = await startTestService({ outputLinkTtlSeconds: 60 }, { clock, startWorker: false, deployments: [gate] });
    owner = await t.account(10 * PRICE_D);
    sibling = await t.siblingKey(owner.accountId);
    taskId = (await createTask(t, owner.apiKey, bodyD())).body.data.taskId;
  });
  afterAll(async () => {
    recordCounts('hostile', counts);
    await t?.close();
  });
  const unchanged = async () => {
    expect(await t.wallet(owner.accountId)).toMatchObject({ held: PRICE_D, available: 9 * PRICE_D, spent: 0 });
    await t.checkLedger(owner.accountId);
  };

  it.each([
    ['a valid key in the query string', (k: string) => ({ path: `/api/v1/chat/credit?api_key=${k}`, headers: {} })],
    [
      'a valid key in the query string and the header',
      (k: string) => ({ path: `/api/v1/chat/credit?token=${k}`, headers: { authorization: `Bearer ${k}` } }),
    ],
    [
      'Basic with the key as user',
      (k: string) => ({
        path: '/api/v1/chat/credit',
        headers: { authorization: `Basic ${Buffer.from(`${k}:`).toString('base64')}` },
      }),
    ],
    ['the bare key without a scheme', (k: string) => ({ path: '/api/v1/chat/credit', headers: { authorization: k } })],
    [
      'Bearer with two keys',
      (k: string) => ({ path: '/api/v1/chat/credit', headers: { authorization: `Bearer ${k} ${k}` } }),
    ],
    ['the key in X-Api-Key', (k: string) => ({ path: '/api/v1/chat/credit', headers: { 'x-api-key': k } })],
    [
      'a key with one character changed',
      (k: string) => ({
        path: '/api/v1/chat/credit',
        headers: { authorization: `Bearer ${k.slice(0, -1)}${k.endsWith('A') ? 'B' : 'A'}` },
      }),
    ],
  ])('%s is 401 and changes nothing', async (_name, make) => {
    counts.cases++;
    const { path, headers } = make(owner.apiKey);
    const r = await t.call('GET', path, { headers });
    expectError(r, 401, r.body.code);
    expect(String(r.body.code)).toMatch(/^401\d\d$/);
    expect(JSON.stringify(r.body)).not.toContain(owner.apiKey);
    await unchanged();
  });

  it('two Authorization headers are refused (raw request), never the first or last silently', async () => {
    counts.cases++;
    const url = new URL(t.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest({
        host: url.hostname,
        port: url.port,
        path: '/api/v1/chat/credit',
        method: 'GET',
        headers: [
          ['authorization', `Bearer ${owner.apiKey}`],
          ['authorization', 'Bearer sk-service-forged'],
        ] as any,
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect([400, 401]).toContain(status);
  });

  // The auth-scheme is case-insensitive in HTTP (RFC 9110, section 11.1): every spelling is the same caller.
  it.each(['bearer', 'BEARER', 'bEaReR', 'Bearer  '])(
    'the scheme spelled %j reaches the same caller, and only it',
    async (scheme) => {
      counts.cases++;
      const r = await t.call('GET', '/api/v1/chat/credit', { headers: { authorization: `${scheme} ${owner.apiKey}` } });
      expect(r.status).toBe(200);
      expect(r.body.data.held).toBe(PRICE_D);
    },
  );

  it('a revoked key is refused on the very next request, though its lookup was cached', async () => {
    counts.cases++;
    const { apiKey, keyId } = await createKey(t.service.ctx.db, owner.accountId, 'personal', Date.now());
    expect((await t.call('GET', '/api/v1/chat/credit', { key: apiKey })).status).toBe(200);
    await revokeKey(t.service.ctx.db, keyId, Date.now());
    expectError(await t.call('GET', '/api/v1/chat/credit', { key: apiKey }), 401, 40101);
    expectError(await createTask(t, apiKey, bodyD()), 401, 40101);
    await unchanged();
  });

  it.each([
    ['read', (k: string, id: string) => recordInfo(t, k, id)],
    ['retry', (k: string, id: string) => t.call('POST', '/api/v1/jobs/retry', { key: k, body: { taskId: id } })],
    ['purge', (k: string, id: string) => t.call('POST', '/api/v1/jobs/purge', { key: k, body: { taskId: id } })],
  ])("a sibling key trying to %s another key's task gets the same 404 as an unknown task", async (_name, act) => {
    counts.cases += 2;
    const theirs = await act(sibling, taskId);
    const unknown = await act(sibling, 'task_doesnotexist00');
    expectError(theirs, 404, 40401);
    expectError(unknown, 404, 40401);
    expect(stripId(theirs.body)).toEqual(stripId(unknown.body));
    expect(JSON.stringify(theirs.body)).not.toContain(taskId);
    await unchanged();
  });

  it('a quote from another key, a forged signature or a replayed quote for another request is 409 40901', async () => {
    const q = (await t.call('POST', '/api/v1/jobs/quote', { key: owner.apiKey, body: bodyD() })).body.data;
    const [version, claims, signature] = q.quoteId.split('.');
    const forgedClaims = JSON.parse(Buffer.from(claims, 'base64url').toString('utf8'));
    forgedClaims[3] = 0; // a lower price, same signature
    const cases = [
      { key: sibling, body: { ...bodyD(), quoteId: q.quoteId, expectedCredits: q.estimatedCredits } },
      {
        key: owner.apiKey,
        body: {
          ...bodyD(),
          quoteId: `${version}.${claims}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`,
          expectedCredits: q.estimatedCredits,
        },
      },
      {
        key: owner.apiKey,
        body: {
          ...bodyD(),
          quoteId: `${version}.${Buffer.from(JSON.stringify(forgedClaims)).toString('base64url')}.${signature}`,
          expectedCredits: 0,
        },
      },
      {
        key: owner.apiKey,
        body: { ...bodyD('another request entirely'), quoteId: q.quoteId, expectedCredits: q.estimatedCredits },
      },
      { key: owner.apiKey, body: { ...bodyD(), quoteId: 'q1.e30.AAAA', expectedCredits: q.estimatedCredits } },
    ];
    for (const c of cases) {
      counts.cases++;
      expectError(await createTask(t, c.key, c.body), 409, 40901);
      await unchanged();
    }
  });

  it('a signed output link: altered path or signature is 403 40305, expired 403 40304 with its own message; the genuine one works', async () => {
    const { apiKey } = await t.account(PRICE_D);
    const id = (await createTask(t, apiKey, bodyD())).body.data.taskId;
    gate.released.add(id);
    for (let i = 0; i < 5; i++) await t.service.worker!.runOnce();
    const done = (await recordInfo(t, apiKey, id)).body.data;
    expect(done.state).toBe('succeeded');
    const url = new URL(done.output.assets[0].url);
    expect((await fetch(url)).status).toBe(200);
    const alteredPath = new URL(url);
    alteredPath.pathname = alteredPath.pathname.replace(/0\.mp4$/, '1.mp4');
    const otherTask = new URL(url);
    otherTask.pathname = otherTask.pathname.replace(id, taskId);
    const alteredSig = new URL(url);
    alteredSig.searchParams.set(
      'sig',
      `${url.searchParams.get('sig')!.slice(0, -1)}${url.searchParams.get('sig')!.endsWith('A') ? 'B' : 'A'}`,
    );
    const longerExpiry = new URL(url);
    longerExpiry.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
    const answer = async (link: URL, language = 'en') => {
      const r = await fetch(link, { headers: { 'accept-language': language } });
      return { status: r.status, body: (await r.json()) as { code: number; msg: string } };
    };
    for (const bad of [alteredPath, otherTask, alteredSig, longerExpiry]) {
      counts.cases++;
      expect(await answer(bad), bad.toString()).toMatchObject({
        status: 403,
        body: { code: 40305, msg: codeMessage('link_invalid', 'en') },
      });
    }
    clock.advance(61_000);
    counts.cases++;
    // No API key is involved: the message says the link expired and how to get a fresh one, in the caller's language.
    expect(await answer(url)).toMatchObject({
      status: 403,
      body: { code: 40304, msg: codeMessage('link_expired', 'en') },
    });
    expect(await answer(url, 'de')).toMatchObject({
      status: 403,
      body: { code: 40304, msg: codeMessage('link_expired', 'de') },
    });
    expect(codeMessage('link_expired', 'de')).not.toBe(codeMessage('link_expired', 'en'));
  });
});
