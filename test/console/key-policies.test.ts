/**
 * The console's key policy editor API (issue 40, point 3): an owner sets and clears the policy of
 * their own keys through the CLI's validator and audit; a bad policy is 400 40050 with the field,
 * in the caller's language, and changes nothing; another account's key is not found. A key is made
 * with a policy, and the keys list shows each key's policy with what is left of its budget; an
 * operator edits any account's key (audited with the operator as actor); an expiry in the past is
 * refused (console and CLI), and a change that changes nothing writes no audit row.
 */
import { serviceForSuite } from '../support/suite-service.js';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { addCredits } from '../../runtime/accounts/accounts.js';
import { run } from '../../runtime/cli/main.js';
import { CLI_OPERATOR, setRole } from '../../runtime/operator/operator-actions.js';
import { bodyD, createTask, PRICE_D } from '../http/helpers.js';
import { signUp, type ConsoleUser, userRow } from './support.js';

describe('console key policies', () => {
  const svc = serviceForSuite(undefined, {}, { startWorker: false });
  let ada: ConsoleUser;
  let eve: ConsoleUser;
  let olive: ConsoleUser;

  beforeAll(async () => {
    ada = await signUp(svc.t, 'ada-policy@example.com');
    eve = await signUp(svc.t, 'eve-policy@example.com');
    olive = await signUp(svc.t, 'olive-policy@example.com');
    await setRole(svc.t.service.ctx.db, CLI_OPERATOR, 'olive-policy@example.com', 'operator', Date.now());
  });

  async function putPolicy(user: ConsoleUser, keyId: string, body: unknown, language?: string, path = '/console/api') {
    const headers: Record<string, string> = {
      cookie: user.cookie,
      'x-csrf-token': user.csrf,
      'content-type': 'application/json',
    };
    if (language) headers['accept-language'] = language;
    const r = await fetch(`${svc.t.url}${path}/keys/${keyId}/policy`, {
      method: 'PUT',
      headers,
      body: JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as any };
  }

  const auditOf = (keyId: string) =>
    svc.t.service.ctx.db.kysely.selectFrom('audit_log').selectAll().where('target', '=', keyId).execute();

  async function newKey(user: ConsoleUser) {
    const created = await user.call('POST', '/console/api/keys', {});
    expect(created.status).toBe(200);
    return created.body.data as { apiKey: string; keyId: string };
  }

  it('sets a policy, which createTask then enforces, audited as key.policy; null clears a part', async () => {
    const { apiKey, keyId } = await newKey(ada);
    const session = await ada.call('GET', '/console/api/session');
    await addCredits(svc.t.service.ctx.db, session.body.data.accountId, 1000, Date.now());

    const set = await putPolicy(ada, keyId, { budget: '5000/month', models: ['vendor_a/*'], maxTasksInFlight: 2 });
    expect(set.status).toBe(200);
    expect(set.body.data.policy).toMatchObject({
      budget: { credits: 5000, period: 'month' },
      models: ['vendor_a/*'],
      maxTasksInFlight: 2,
    });
    const refused = await createTask(svc.t, apiKey, bodyD());
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 403, code: 40330 });

    const audit = await auditOf(keyId);
    expect(audit.map((row) => row.action)).toEqual(['key.policy']);

    const cleared = await putPolicy(ada, keyId, { models: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.data.policy.models).toBeNull();
    expect(cleared.body.data.policy.budget).toMatchObject({ credits: 5000, period: 'month' });
    expect((await createTask(svc.t, apiKey, bodyD())).status).toBe(202);
    expect(await auditOf(keyId)).toHaveLength(2);
  });

  it.each([
    [{ budget: '100/year' }, 'budget'],
    [{ networks: ['10.0.0.0/33'] }, 'networks'],
    [{ models: ['vendor_*/x'] }, 'models'],
    [{ maxTasksInFlight: 0 }, 'maxTasksInFlight'],
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
    const row = await svc.t.service.ctx.db.kysely
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

  /** The operator's route for any account's key. */
  const operatorPut = (user: ConsoleUser, keyId: string, body: unknown, language?: string) =>
    putPolicy(user, keyId, body, language, '/console/api/operator');

  const listed = async (user: ConsoleUser, keyId: string) =>
    ((await user.call('GET', '/console/api/keys')).body.data as { keyId: string; policy: any }[]).find(
      (k) => k.keyId === keyId,
    );

  it('makes a key with a policy, audited as key.create; the list shows the policy and what is left of its budget', async () => {
    const { account_id: accountId } = await userRow(svc.t, 'ada-policy@example.com');
    await addCredits(svc.t.service.ctx.db, accountId, 1000, Date.now());
    const created = await ada.call('POST', '/console/api/keys', {
      team: 'render',
      policy: { budget: '500/day', models: ['vendor_d/*'], maxTasksInFlight: 3, networks: ['127.0.0.0/8'] },
    });
    expect(created.status).toBe(200);
    const { apiKey, keyId } = created.body.data;
    expect(created.body.data.workspace).toBe('team:render');
    expect((await createTask(svc.t, apiKey, bodyD())).status).toBe(202);

    const row = await listed(ada, keyId);
    expect(row?.policy).toMatchObject({
      budget: { credits: 500, period: 'day', used: PRICE_D, remaining: 500 - PRICE_D, alerts: [80, 100] },
      models: ['vendor_d/*'],
      maxTasksInFlight: 3,
      inFlight: 1,
      expiresAt: null,
      networks: ['127.0.0.0/8'],
    });
    const audit = await auditOf(keyId);
    expect(audit.map((r) => [r.action, r.actor])).toEqual([
      ['key.create', (await userRow(svc.t, 'ada-policy@example.com')).id],
    ]);
    expect(JSON.parse(String(audit[0].details))).toMatchObject({
      accountId,
      workspace: 'team:render',
      policy: { budget: { credits: 500, period: 'day' }, models: ['vendor_d/*'], maxTasksInFlight: 3 },
    });

    // A key without one shows every part empty, and its making is no audited change (as before).
    const plain = await newKey(ada);
    expect((await listed(ada, plain.keyId))?.policy).toEqual({
      budget: null,
      models: null,
      maxTasksInFlight: null,
      inFlight: 0,
      expiresAt: null,
      networks: null,
    });
    expect(await auditOf(plain.keyId)).toHaveLength(0);
  });

  it("refuses a key made with a bad policy: 400 40050, param policy.<part>, in the caller's language, and makes no key", async () => {
    const before = (await ada.call('GET', '/console/api/keys')).body.data.length;
    const r = await fetch(`${svc.t.url}/console/api/keys`, {
      method: 'POST',
      headers: {
        cookie: ada.cookie,
        'x-csrf-token': ada.csrf,
        'content-type': 'application/json',
        'accept-language': 'de',
      },
      body: JSON.stringify({ policy: { networks: ['10.0.0.0/33'] } }),
    });
    const body = (await r.json()) as any;
    expect({ status: r.status, code: body.code, param: body.data?.param }).toEqual({
      status: 400,
      code: 40050,
      param: 'policy.networks',
    });
    expect(body.msg).toContain('Ungültige Schlüsselrichtlinie');
    expect((await ada.call('GET', '/console/api/keys')).body.data).toHaveLength(before);
  });

  it('refuses an expiry in the past on create and set, console and CLI, with the field', async () => {
    const past = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const created = await ada.call('POST', '/console/api/keys', { policy: { expires: past } });
    expect([created.status, created.body.code, created.body.data?.param]).toEqual([400, 40050, 'policy.expires']);
    expect(created.body.data.detail ?? created.body.msg).toContain('future');

    const { keyId } = await newKey(ada);
    const set = await putPolicy(ada, keyId, { expires: '2001-01-01T00:00:00Z' }, 'fr');
    expect([set.status, set.body.code, set.body.data?.param]).toEqual([400, 40050, 'expires']);
    expect(set.body.msg).toContain('future');
    const byOperator = await operatorPut(olive, keyId, { expires: past });
    expect([byOperator.status, byOperator.body.code, byOperator.body.data?.param]).toEqual([400, 40050, 'expires']);
    expect(await auditOf(keyId)).toHaveLength(0);
    const future = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const ok = await putPolicy(ada, keyId, { expires: future });
    expect(ok.body.data.policy.expiresAt).toBe(future);

    // The CLI's keys create and keys set: a usage error naming the flag, nothing made or changed.
    const { account_id: accountId } = await userRow(svc.t, 'ada-policy@example.com');
    const errors: string[] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((line: string) => void errors.push(line));
    try {
      const dbArgs = ['--db', svc.t.config.dbUrl];
      expect(await run(['keys', 'create', '--account', accountId, '--expires', past, ...dbArgs])).not.toBe(0);
      expect(await run(['keys', 'set', '--key', keyId, '--expires', past, ...dbArgs])).not.toBe(0);
    } finally {
      spy.mockRestore();
    }
    expect(errors.filter((e) => e.includes('--expires: a date or date-time in the future'))).toHaveLength(2);
    expect((await listed(ada, keyId))?.policy.expiresAt).toBe(future);
  });

  it('an empty body, or one that sets what the key has, changes nothing and writes no audit row', async () => {
    const { keyId } = await newKey(ada);
    const empty = await putPolicy(ada, keyId, {});
    expect(empty.status).toBe(200);
    expect(empty.body.data.policy).toMatchObject({ budget: null, models: null });
    expect(await auditOf(keyId)).toHaveLength(0);
    expect((await putPolicy(ada, keyId, { budget: '10/week' })).status).toBe(200);
    expect(await auditOf(keyId)).toHaveLength(1);
    for (const body of [{}, { budget: '10/week' }, { models: null }]) {
      expect((await putPolicy(ada, keyId, body)).status).toBe(200);
      expect((await operatorPut(olive, keyId, body)).status).toBe(200);
    }
    expect(await auditOf(keyId)).toHaveLength(1);
  });

  it("an operator edits another account's key: key.policy audited with the operator as actor, shown in the account", async () => {
    const { keyId } = await newKey(eve);
    const { account_id: eveAccount } = await userRow(svc.t, 'eve-policy@example.com');
    const set = await operatorPut(olive, keyId, { budget: '2000/month', maxTasksInFlight: 4, models: ['vendor_a/*'] });
    expect(set.status).toBe(200);
    expect(set.body.data).toMatchObject({
      keyId,
      policy: { budget: { credits: 2000, period: 'month' }, maxTasksInFlight: 4, models: ['vendor_a/*'] },
    });
    const audit = await auditOf(keyId);
    expect(audit.map((r) => r.action)).toEqual(['key.policy']);
    expect(audit[0].actor).toBe((await userRow(svc.t, 'olive-policy@example.com')).id);
    expect(JSON.parse(String(audit[0].details))).toMatchObject({
      accountId: eveAccount,
      before: { budget: null, maxTasksInFlight: null },
      after: { budget: { credits: 2000, period: 'month' }, maxTasksInFlight: 4 },
    });
    // The owner and the operator's account view read the same policy.
    expect((await listed(eve, keyId))?.policy).toMatchObject({
      budget: { credits: 2000, period: 'month', used: 0, remaining: 2000 },
      maxTasksInFlight: 4,
    });
    const account = await olive.call('GET', `/console/api/operator/accounts/${eveAccount}`);
    expect(account.body.data.keys.find((k: { keyId: string }) => k.keyId === keyId).policy).toMatchObject({
      budget: { credits: 2000, remaining: 2000 },
      models: ['vendor_a/*'],
    });
    // null clears a part, as for the owner.
    const cleared = await operatorPut(olive, keyId, { models: null });
    expect(cleared.body.data.policy.models).toBeNull();
    expect(await auditOf(keyId)).toHaveLength(2);
  });

  it("the operator route: a customer is refused 403, an unknown key is the revocation's 404", async () => {
    const { keyId } = await newKey(eve);
    const refused = await operatorPut(eve, keyId, { maxTasksInFlight: 1 });
    expect([refused.status, refused.body.data?.reason]).toEqual([403, 'not_operator']);
    expect((await listed(eve, keyId))?.policy.maxTasksInFlight).toBeNull();
    const unknown = await operatorPut(olive, 'key_does_not_exist', { maxTasksInFlight: 1 });
    const revoke = await olive.call('POST', '/console/api/operator/keys/key_does_not_exist/revoke');
    expect(unknown.status).toBe(404);
    expect({ code: unknown.body.code, reason: unknown.body.data?.reason }).toEqual({
      code: revoke.body.code,
      reason: revoke.body.data?.reason,
    });
    expect(await auditOf('key_does_not_exist')).toHaveLength(0);
  });
});
