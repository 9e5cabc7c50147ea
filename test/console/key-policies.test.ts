/**
 * The console's key policy editor API (issue 40, point 3): an owner sets and clears the policy of
 * their own keys through the CLI's validator and audit; a bad policy is 400 40050 with the field,
 * in the caller's language, and changes nothing; another account's key is not found.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCredits } from '../../runtime/accounts/accounts.js';
import { bodyD, createTask } from '../http/helpers.js';
import { startTestService, type TestService } from '../support/service.js';
import { signUp, type ConsoleUser } from './support.js';

describe('console key policies', () => {
  let t: TestService;
  let ada: ConsoleUser;
  let eve: ConsoleUser;

  beforeAll(async () => {
    t = await startTestService({}, { startWorker: false });
    ada = await signUp(t, 'ada-policy@example.com');
    eve = await signUp(t, 'eve-policy@example.com');
  });
  afterAll(async () => t?.close());

  async function putPolicy(user: ConsoleUser, keyId: string, body: unknown, language?: string) {
    const headers: Record<string, string> = {
      cookie: user.cookie,
      'x-csrf-token': user.csrf,
      'content-type': 'application/json',
    };
    if (language) headers['accept-language'] = language;
    const r = await fetch(`${t.url}/console/api/keys/${keyId}/policy`, {
      method: 'PUT',
      headers,
      body: JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as any };
  }

  const auditOf = (keyId: string) =>
    t.service.ctx.db.kysely.selectFrom('audit_log').selectAll().where('target', '=', keyId).execute();

  async function newKey(user: ConsoleUser) {
    const created = await user.call('POST', '/console/api/keys', {});
    expect(created.status).toBe(200);
    return created.body.data as { apiKey: string; keyId: string };
  }

  it('sets a policy, which createTask then enforces, audited as key.policy; null clears a part', async () => {
    const { apiKey, keyId } = await newKey(ada);
    const session = await ada.call('GET', '/console/api/session');
    await addCredits(t.service.ctx.db, session.body.data.accountId, 1000, Date.now());

    const set = await putPolicy(ada, keyId, { budget: '5000/month', models: ['vendor_a/*'], maxInFlight: 2 });
    expect(set.status).toBe(200);
    expect(set.body.data.policy).toMatchObject({
      budget: { credits: 5000, period: 'month' },
      models: ['vendor_a/*'],
      maxInFlight: 2,
    });
    const refused = await createTask(t, apiKey, bodyD());
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 403, code: 40330 });

    const audit = await auditOf(keyId);
    expect(audit.map((row) => row.action)).toEqual(['key.policy']);

    const cleared = await putPolicy(ada, keyId, { models: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.data.policy.models).toBeNull();
    expect(cleared.body.data.policy.budget).toMatchObject({ credits: 5000, period: 'month' });
    expect((await createTask(t, apiKey, bodyD())).status).toBe(202);
    expect(await auditOf(keyId)).toHaveLength(2);
  });

  it.each([
    [{ budget: '100/year' }, 'budget'],
    [{ networks: ['10.0.0.0/33'] }, 'networks'],
    [{ models: ['vendor_*/x'] }, 'models'],
    [{ maxInFlight: 0 }, 'maxInFlight'],
    [{ expires: 'tomorrow' }, 'expires'],
  ])('refuses %j with 400 40050 and param %s, changing nothing', async (body, param) => {
    const { keyId } = await newKey(ada);
    const before = await putPolicy(ada, keyId, { budget: '10/day' });
    expect(before.status).toBe(200);
    const r = await putPolicy(ada, keyId, body, 'de');
    expect({ status: r.status, code: r.body.code, param: r.body.data?.param }).toEqual({
      status: 400,
      code: 40050,
      param,
    });
    expect(r.body.msg).toContain('Ungültige Schlüsselrichtlinie');
    expect(await auditOf(keyId)).toHaveLength(1);
    // What GET /api/v1/keys/current would show: the policy the key had before.
    const row = await t.service.ctx.db.kysely
      .selectFrom('api_keys')
      .select(['budget_credits', 'budget_period', 'allowed_models', 'max_in_flight', 'expires_at', 'networks'])
      .where('id', '=', keyId)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ budget_period: 'day', allowed_models: null, max_in_flight: null, networks: null });
    expect(Number(row.budget_credits)).toBe(10);
  });

  it("answers 404 for another account's key and leaves it alone", async () => {
    const { keyId } = await newKey(ada);
    const r = await putPolicy(eve, keyId, { budget: '1/day' });
    expect(r.status).toBe(404);
    expect(await auditOf(keyId)).toHaveLength(0);
  });
});
