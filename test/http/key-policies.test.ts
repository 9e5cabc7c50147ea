import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { run } from '../../runtime/cli/main.js';
import { mediaforgeJsonInProcess } from '../support/cli-process.js';
import { ManualClock } from '../../runtime/clock.js';
import { Mediaforge } from '@mediaforge/client';
import { failTask, succeedTask } from '../../runtime/tasks/resolve-task.js';
import { bodyD, createTask, PRICE_D } from './helpers.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * Key policies (issue 40) through the CLI that sets them and the HTTP operations they refuse:
 * allow-lists, budgets per UTC period (moved with the service's test clock), the in-flight cap,
 * expiry and networks. A refusal holds nothing, makes no task and writes no Idempotency-Key row.
 */

/** Runs the CLI in this process with --json and answers what it printed. */
const cli = (t: TestService, argv: string[]) => mediaforgeJsonInProcess(t.config.dbUrl, argv);

async function keyWith(t: TestService, accountId: string, flags: string[]): Promise<{ apiKey: string; keyId: string }> {
  return cli(t, ['keys', 'create', '--account', accountId, ...flags]);
}

const setPolicy = (t: TestService, keyId: string, flags: string[]) => cli(t, ['keys', 'set', '--key', keyId, ...flags]);

async function taskCount(t: TestService, apiKey: string): Promise<number> {
  const r = await t.call('GET', '/api/v1/jobs?limit=100', { key: apiKey });
  expect(r.status).toBe(200);
  return r.body.data.items.length;
}

describe('key policies', () => {
  let t: TestService;
  const clock = new ManualClock(Date.UTC(2026, 0, 7, 12)); // a Wednesday
  beforeAll(async () => {
    t = await startTestService({}, { clock, startWorker: false });
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each([
    ['an exact id', 'vendor_d/family_d/reference-to-video', true],
    ['the vendor pattern', 'vendor_d/*', true],
    ['the family pattern', 'vendor_d/family_d/*', true],
    ['a single-segment wildcard in the middle', 'vendor_d/*/reference-to-video', true],
    ['another vendor', 'vendor_a/*', false],
    ['a prefix that is not a whole segment', 'vendor_/*', false],
    ['a family prefix that is not a whole segment', 'vendor_d/family/*', false],
    ['another mode of the family', 'vendor_d/family_d/text-to-video', false],
  ])('allow-list %s (%s): allowed %s', async (_name, pattern, allowed) => {
    const { accountId } = await t.account(1000);
    const { apiKey, keyId } = await keyWith(t, accountId, ['--models', pattern]);
    const quote = await t.call('POST', '/api/v1/jobs/quote', { key: apiKey, body: bodyD() });
    const r = await createTask(t, apiKey, bodyD(), { headers: { 'Idempotency-Key': 'first-try' } });
    if (allowed) {
      expect([quote.status, r.status]).toEqual([200, 202]);
      return;
    }
    for (const refused of [quote, r])
      expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 403, code: 40330 });
    expect(r.body.msg).toContain('vendor_d/family_d/reference-to-video');
    expect(await t.wallet(accountId)).toMatchObject({ available: 1000, held: 0 });
    expect(await taskCount(t, apiKey)).toBe(0);
    // No Idempotency-Key row was written: once allowed, the same key makes a new task, not a replay.
    await setPolicy(t, keyId, ['--models', 'none']);
    const again = await createTask(t, apiKey, bodyD(), { headers: { 'Idempotency-Key': 'first-try' } });
    expect(again.status).toBe(202);
    expect(again.headers.get('Idempotent-Replayed')).toBeNull();
    await t.checkLedger(accountId);
  });

  it('retry and POST /v1/videos are refused by the allow-list before any hold', async () => {
    const { accountId } = await t.account(1000);
    const { apiKey, keyId } = await keyWith(t, accountId, []);
    const created = await createTask(t, apiKey, bodyD());
    expect(created.status).toBe(202);
    await failTask(t.service.ctx, created.body.data.taskId, 'generation_failed', 'boom');
    await setPolicy(t, keyId, ['--models', 'vendor_a/*']);
    const before = await t.wallet(accountId);
    const retry = await t.call('POST', '/api/v1/jobs/retry', {
      key: apiKey,
      body: { taskId: created.body.data.taskId },
    });
    expect({ status: retry.status, code: retry.body.code }).toEqual({ status: 403, code: 40330 });
    const video = await t.call('POST', '/v1/videos', {
      key: apiKey,
      body: { model: 'vendor_b/family_c-2.6/reference-to-video', prompt: 'a lighthouse at dusk', seconds: '2' },
    });
    expect({ status: video.status, code: video.body.error?.code }).toEqual({ status: 403, code: 'model_not_allowed' });
    expect(await t.wallet(accountId)).toEqual(before);
    expect(await taskCount(t, apiKey)).toBe(1);
    await t.checkLedger(accountId);
  });

  it.each([
    // [period, accepted at, the last moment of its period, the first of the next]
    ['day', Date.UTC(2026, 2, 4, 9), Date.UTC(2026, 2, 4, 23, 59, 59, 999), Date.UTC(2026, 2, 5)],
    ['week', Date.UTC(2026, 2, 4, 9), Date.UTC(2026, 2, 8, 23, 59, 59, 999), Date.UTC(2026, 2, 9)], // Wed -> Mon
    ['month', Date.UTC(2026, 1, 10), Date.UTC(2026, 1, 28, 23, 59, 59, 999), Date.UTC(2026, 2, 1)],
  ])(
    'a %s budget: refused past it with what is left and when the period ends; rolls over at its end',
    async (period, at, last, next) => {
      clock.set(at);
      const { accountId } = await t.account(10_000);
      const { apiKey } = await keyWith(t, accountId, ['--budget', `${3 * PRICE_D}/${period}`]);
      for (let i = 0; i < 3; i++) expect((await createTask(t, apiKey, bodyD())).status).toBe(202);
      clock.set(last);
      const refused = await createTask(t, apiKey, bodyD(), { headers: { 'Idempotency-Key': 'over' } });
      expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 402, code: 40203 });
      expect(refused.body.msg).toContain(`0 of ${3 * PRICE_D} per ${period}`);
      expect(refused.body.msg).toContain(new Date(next).toISOString());
      const quote = await t.call('POST', '/api/v1/jobs/quote', { key: apiKey, body: bodyD() });
      expect(quote.body.code).toBe(40203);
      expect(await t.wallet(accountId)).toMatchObject({ held: 3 * PRICE_D });
      clock.set(next);
      const fresh = await createTask(t, apiKey, bodyD(), { headers: { 'Idempotency-Key': 'over' } });
      expect(fresh.status).toBe(202);
      expect(fresh.headers.get('Idempotent-Replayed')).toBeNull();
      await t.checkLedger(accountId);
    },
  );

  it('a settlement counts the charge, a release gives the hold back, in the period the task was accepted in', async () => {
    clock.set(Date.UTC(2026, 3, 1, 10));
    const { accountId } = await t.account(10_000);
    const budget = 2 * PRICE_D;
    const { apiKey } = await keyWith(t, accountId, ['--budget', `${budget}/day`]);
    const a = (await createTask(t, apiKey, bodyD())).body.data.taskId;
    const b = (await createTask(t, apiKey, bodyD())).body.data.taskId;
    expect((await createTask(t, apiKey, bodyD())).body.code).toBe(40203);
    await failTask(t.service.ctx, a, 'generation_failed', 'boom'); // released: its hold is given back
    expect((await createTask(t, apiKey, bodyD())).status).toBe(202);
    const charged = await succeedTask(t.service.ctx, b, { outputs: [], outputSeconds: 1 });
    expect(charged).toBe(true);
    const task = await t.call('GET', `/api/v1/jobs/recordInfo?taskId=${b}`, { key: apiKey });
    const charge = task.body.data.credits as number;
    expect(charge).toBeLessThan(PRICE_D);
    const refused = await createTask(t, apiKey, bodyD());
    // What is left: the budget less one open hold and the settled charge.
    expect(refused.body.msg).toContain(`needs ${PRICE_D} credits and ${budget - PRICE_D - charge} of ${budget}`);
    await t.checkLedger(accountId);
  });

  it('GET /api/v1/keys/current (and the client) answers the policy and what is left of the budget', async () => {
    clock.set(Date.UTC(2026, 6, 15, 8)); // a Wednesday
    const { accountId } = await t.account(10_000);
    const { apiKey, keyId } = await keyWith(t, accountId, [
      '--budget',
      '5000/week',
      '--models',
      'vendor_d/*,vendor_a/family_a-2.0-mini/reference-to-video',
      '--max-in-flight',
      '5',
      '--expires',
      '2099-01-01',
      '--networks',
      '127.0.0.0/8,::1/128',
    ]);
    expect((await createTask(t, apiKey, bodyD())).status).toBe(202);
    const want = {
      keyId,
      workspace: 'personal',
      budget: {
        credits: 5000,
        period: 'week',
        used: PRICE_D,
        remaining: 5000 - PRICE_D,
        periodStart: '2026-07-13T00:00:00.000Z',
        periodEnd: '2026-07-20T00:00:00.000Z',
        alerts: [80, 100],
      },
      models: ['vendor_d/*', 'vendor_a/family_a-2.0-mini/reference-to-video'],
      maxTasksInFlight: 5,
      inFlight: 1,
      expiresAt: '2099-01-01T00:00:00.000Z',
      networks: ['127.0.0.0/8', '::1/128'],
    };
    const r = await t.call('GET', '/api/v1/keys/current', { key: apiKey });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual(want);
    expect(await new Mediaforge({ apiKey, baseUrl: t.url }).keys.current()).toEqual(want);
    const plain = await t.call('GET', '/api/v1/keys/current', { key: (await t.account(1)).apiKey });
    expect(plain.body.data).toMatchObject({
      budget: null,
      models: null,
      maxTasksInFlight: null,
      expiresAt: null,
      networks: null,
    });
  });

  it('maxTasksInFlight: queued + running of the key; 429 with Retry-After, a replay still answers', async () => {
    const { accountId } = await t.account(10_000);
    const { apiKey } = await keyWith(t, accountId, ['--max-in-flight', '2']);
    const first = await createTask(t, apiKey, bodyD(), { headers: { 'Idempotency-Key': 'one' } });
    expect((await createTask(t, apiKey, bodyD())).status).toBe(202);
    const capped = await createTask(t, apiKey, bodyD());
    expect({ status: capped.status, code: capped.body.code }).toEqual({ status: 429, code: 42902 });
    expect(Number(capped.headers.get('Retry-After'))).toBeGreaterThan(0);
    const replay = await createTask(t, apiKey, bodyD(), { headers: { 'Idempotency-Key': 'one' } });
    expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
    expect(replay.body.data.taskId).toBe(first.body.data.taskId);
    await failTask(t.service.ctx, first.body.data.taskId, 'generation_failed', 'boom');
    expect((await createTask(t, apiKey, bodyD())).status).toBe(202);
    expect(await taskCount(t, apiKey)).toBe(3);
    await t.checkLedger(accountId);
  });

  it('expiry: 401 40120 on every Bearer operation from the expiry on (the test clock)', async () => {
    // The CLI refuses an expiry before its own (real) clock: the expiry is two days after today's UTC
    // midnight, and the service's test clock is moved to just before and then onto it.
    const expiry = Date.now() - (Date.now() % 86_400_000) + 2 * 86_400_000;
    clock.set(expiry - 12 * 3600 * 1000);
    const { accountId } = await t.account(1000);
    const { apiKey, keyId } = await keyWith(t, accountId, ['--expires', new Date(expiry).toISOString().slice(0, 10)]);
    expect((await t.call('GET', '/api/v1/jobs', { key: apiKey })).status).toBe(200);
    clock.set(expiry);
    for (const r of [await t.call('GET', '/api/v1/jobs', { key: apiKey }), await createTask(t, apiKey, bodyD())])
      expect({ status: r.status, code: r.body.code }).toEqual({ status: 401, code: 40120 });
    const models = await t.call('GET', '/v1/models', { key: apiKey });
    expect(models.status).toBe(401);
    await setPolicy(t, keyId, ['--expires', new Date(expiry + 30 * 86_400_000).toISOString()]);
    expect((await t.call('GET', '/api/v1/jobs', { key: apiKey })).status).toBe(200);
  });

  it.each([
    ['a network the client is in', '127.0.0.0/8', 200],
    ['another network', '203.0.113.0/24', 403],
    ['an IPv6 network only', '2001:db8::/32', 403],
  ])('networks without a trusted proxy: %s', async (_name, networks, status) => {
    const { accountId } = await t.account(1000);
    const { apiKey } = await keyWith(t, accountId, ['--networks', networks]);
    const r = await t.call('GET', '/api/v1/jobs', { key: apiKey });
    expect(r.status).toBe(status);
    if (status === 403) expect(r.body.code).toBe(40331);
  });

  it('networks behind a trusted proxy: the address the proxy names', async () => {
    const proxied = await startTestService({ trustedProxies: ['127.0.0.1'] }, { startWorker: false });
    try {
      const { accountId } = await proxied.account(1000);
      const { apiKey } = await keyWith(proxied, accountId, ['--networks', '203.0.113.0/24,198.51.100.7/32']);
      const from = (address: string) =>
        proxied.call('GET', '/api/v1/jobs', { key: apiKey, headers: { 'X-Forwarded-For': address } });
      expect((await from('203.0.113.9')).status).toBe(200);
      expect((await from('198.51.100.7')).status).toBe(200);
      const outside = await from('198.51.100.8');
      expect({ status: outside.status, code: outside.body.code }).toEqual({ status: 403, code: 40331 });
      // The proxy itself (no header) is not in the key's networks.
      expect((await proxied.call('GET', '/api/v1/jobs', { key: apiKey })).status).toBe(403);
    } finally {
      await proxied.close();
    }
  });

  it('every change of a policy is in the audit log, before and after', async () => {
    const { accountId } = await t.account(1);
    const { keyId } = await keyWith(t, accountId, ['--budget', '100/day']);
    await setPolicy(t, keyId, ['--budget', 'none', '--max-in-flight', '3']);
    const { entries } = await cli(t, ['audit', '--limit', '50']);
    const mine = entries.filter((e: any) => e.target === keyId).map((e: any) => [e.actor, e.action, e.details]);
    expect(mine).toEqual([
      [
        'cli',
        'key.policy',
        {
          accountId,
          before: {
            budget: { credits: 100, period: 'day' },
            models: null,
            maxTasksInFlight: null,
            expiresAt: null,
            networks: null,
          },
          after: { budget: null, models: null, maxTasksInFlight: 3, expiresAt: null, networks: null },
        },
      ],
      [
        'cli',
        'key.create',
        {
          accountId,
          workspace: 'personal',
          policy: {
            budget: { credits: 100, period: 'day' },
            models: null,
            maxTasksInFlight: null,
            expiresAt: null,
            networks: null,
          },
        },
      ],
    ]);
  });

  it('the CLI refuses a bad policy before opening the database, naming the flag', async () => {
    const { accountId } = await t.account(1);
    for (const [flag, value] of [
      ['--budget', '5000/year'],
      ['--budget', '0/day'],
      ['--models', 'vendor_a/x*'],
      ['--networks', '203.0.113.0/33'],
      ['--expires', 'tomorrow'],
      ['--max-in-flight', '0'],
    ]) {
      const errors: string[] = [];
      const error = vi.spyOn(console, 'error').mockImplementation((line: string) => void errors.push(line));
      try {
        const code = await run(['keys', 'create', '--account', accountId, flag, value, '--db', t.config.dbUrl]);
        expect(code, `${flag} ${value}`).not.toBe(0);
      } finally {
        error.mockRestore();
      }
      expect(errors.join('\n')).toContain(flag);
    }
  });
});
