/** The console and playground JSON APIs without a browser: sessions, CSRF, passwords, the separate playground wallet. */
import { serviceForSuite } from '../support/suite-service.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { addCredits } from '../../runtime/accounts/accounts.js';
import { signUp, type ConsoleUser } from './support.js';

const MODEL = 'vendor_d/family_d/text-to-video';

describe('console sessions and the playground wallet', () => {
  const svc = serviceForSuite();
  let user: ConsoleUser;

  beforeAll(async () => {
    user = await signUp(svc.t, 'ada@example.com');
  });

  const users = () =>
    svc.t.service.ctx.db.kysely
      .selectFrom('users')
      .selectAll()
      .where('email', '=', 'ada@example.com')
      .executeTakeFirstOrThrow();

  it('sets an HttpOnly, SameSite=Lax session cookie and gives 30 playground credits, none for the API', async () => {
    const response = await fetch(`${svc.t.url}/console/api/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-requested-with': 'mediaforge-console' },
      body: JSON.stringify({ email: 'bob@example.com', password: 'another password' }),
    });
    const cookie = response.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^mf_session=[^;]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/); // http public URL: no Secure
    const balance = await user.call('GET', '/console/api/balance');
    expect(balance.body.data.playground.available).toBe(30);
    expect(balance.body.data.api.available).toBe(0);
    // The API account starts without keys: they are made in the console, each shown once.
    const keys = await user.call('GET', '/console/api/keys');
    expect(keys.body.data).toEqual([]);
  });

  it('refuses a second sign-up with the same email (409) and short passwords (400)', async () => {
    const again = await fetch(`${svc.t.url}/console/api/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-requested-with': 'mediaforge-console' },
      body: JSON.stringify({ email: 'ADA@example.com', password: 'whatever123' }),
    });
    expect(again.status).toBe(409);
    const short = await fetch(`${svc.t.url}/console/api/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-requested-with': 'mediaforge-console' },
      body: JSON.stringify({ email: 'c@example.com', password: 'short' }),
    });
    expect(short.status).toBe(400);
  });

  it('needs the CSRF header: sign-up/sign-in without X-Requested-With and session calls without X-CSRF-Token are 403', async () => {
    const noHeader = await fetch(`${svc.t.url}/console/api/signin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ada@example.com', password: 'correct horse battery' }),
    });
    expect(noHeader.status).toBe(403);
    const missing = await user.call('POST', '/console/api/keys', {}, { csrf: null });
    expect(missing.status).toBe(403);
    const wrong = await user.call(
      'POST',
      '/playground/api/tasks',
      { model: MODEL, input: { prompt: 'x' } },
      { csrf: 'not-the-token' },
    );
    expect(wrong.status).toBe(403);
    expect((await user.call('GET', '/playground/api/balance')).body.data.available).toBe(30);
  });

  it('answers a wrong password and an unknown email with 401, and no session with 401', async () => {
    const headers = { 'content-type': 'application/json', 'x-requested-with': 'mediaforge-console' };
    const wrong = await fetch(`${svc.t.url}/console/api/signin`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ email: 'ada@example.com', password: 'wrong password' }),
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    const unknown = await fetch(`${svc.t.url}/console/api/signin`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ email: 'nobody@example.com', password: 'wrong password' }),
    });
    expect(unknown.status).toBe(401);
    const right = await fetch(`${svc.t.url}/console/api/signin`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ email: 'ada@example.com', password: 'correct horse battery' }),
    });
    expect(right.status).toBe(200);
    expect((await fetch(`${svc.t.url}/console/api/session`)).status).toBe(401);
    expect((await fetch(`${svc.t.url}/console/api/session`, { headers: { cookie: 'mf_session=forged' } })).status).toBe(
      401,
    );
  });

  it('API keys cannot spend playground credits; playground tasks hold from the playground wallet only', async () => {
    const created = await user.call('POST', '/console/api/keys', {});
    const apiKey = created.body.data.apiKey as string;
    const attempt = await svc.t.call('POST', '/api/v1/jobs/createTask', {
      key: apiKey,
      body: { model: MODEL, input: { prompt: 'a cat' } },
    });
    expect(attempt.status).toBe(402);
    const { account_id, playground_account_id } = await users();
    expect((await svc.t.wallet(playground_account_id)).available).toBe(30);

    const task = await user.call('POST', '/playground/api/tasks', { model: MODEL, input: { prompt: 'a cat' } });
    expect(task.status).toBe(200);
    expect((await svc.t.wallet(playground_account_id)).held).toBe(task.body.data.maxCredits);
    expect((await svc.t.wallet(account_id)).held).toBe(0);
    // The playground account's own key: its task is not visible to the API key, and the API key's credits are never touched.
    await addCredits(svc.t.service.ctx.db, account_id, 100, Date.now());
    const other = await svc.t.call('GET', `/api/v1/jobs/recordInfo?taskId=${task.body.data.taskId}`, { key: apiKey });
    expect(other.status).toBe(404);
    for (let i = 0; i < 100; i++) {
      const r = await user.call('GET', `/playground/api/tasks/${task.body.data.taskId}`);
      if (r.body.data.state === 'succeeded') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const wallet = await svc.t.wallet(playground_account_id);
    expect(wallet.available + wallet.spent).toBe(30);
    expect((await svc.t.wallet(account_id)).available).toBe(100);
    await svc.t.checkLedger(playground_account_id);
    await svc.t.checkLedger(account_id);
  });

  it('answers field problems per field in the account language', async () => {
    const bad = { model: MODEL, input: { prompt: 'x', duration_seconds: 99 } };
    const en = await user.call('POST', '/playground/api/quote', bad);
    expect(en.status).toBe(400);
    const path = en.body.data.errors[0].path as string;
    expect(path).toContain('duration_seconds');
    expect((await user.call('POST', '/console/api/settings', { language: 'de' })).status).toBe(200);
    const de = await user.call('POST', '/playground/api/quote', bad);
    expect(de.body.data.errors[0].path).toBe(path);
    expect(de.body.data.errors[0].message).not.toBe(en.body.data.errors[0].message);
    await user.call('POST', '/console/api/settings', { language: '' });
  });

  it("does not resend another account's delivery or revoke another account's key", async () => {
    const other = await svc.t.account(0);
    const key = await svc.t.service.ctx.db.kysely
      .selectFrom('api_keys')
      .select('id')
      .where('account_id', '=', other.accountId)
      .executeTakeFirstOrThrow();
    expect((await user.call('POST', `/console/api/keys/${key.id}/revoke`)).status).toBe(404);
    expect((await user.call('POST', '/console/api/deliveries/whd_nope/resend')).status).toBe(404);
  });

  it('signs out: the session is gone', async () => {
    const second = await signUp(svc.t, 'eve@example.com');
    expect((await second.call('POST', '/console/api/signout')).status).toBe(200);
    expect((await second.call('GET', '/console/api/session')).status).toBe(401);
  });
});
