/**
 * The operator console's JSON API over real HTTP (issue 28): a user promoted to operator finds an
 * account by email, adds credits with a note (the ledger row and the audit row say who and why),
 * revokes a key, reads deployments, the margin report and the audit log; every other signed-in
 * user is refused on every operator operation with 403 console_not_operator, and nothing changes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes as consoleRoutes } from '../../generated/console/routes.js';
import { CLI_OPERATOR, setRole } from '../../runtime/operator/operator-actions.js';
import { bodyD, createTask } from '../http/helpers.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';
import { signUp, type ConsoleUser, userRow } from './support.js';

const OP = '/console/api/operator';

interface Target {
  accountId: string;
  keyId: string;
}

/** Every operator operation, as a request a user could send, with what it would act on. */
const OPERATIONS: [string, { method: 'GET' | 'POST' | 'PUT'; path: (x: Target) => string; body?: unknown }][] = [
  ['operatorDeployments', { method: 'GET', path: () => `${OP}/deployments` }],
  ['operatorMargin', { method: 'GET', path: () => `${OP}/margin?since=2020-01-01` }],
  ['operatorAccounts', { method: 'GET', path: () => `${OP}/accounts?q=grace` }],
  ['operatorAccount', { method: 'GET', path: (x) => `${OP}/accounts/${x.accountId}` }],
  [
    'operatorAddCredits',
    { method: 'POST', path: (x) => `${OP}/accounts/${x.accountId}/credits`, body: { credits: 500, note: 'for me' } },
  ],
  [
    'operatorForgiveDebt',
    { method: 'POST', path: (x) => `${OP}/accounts/${x.accountId}/forgive-debt`, body: { note: 'for me' } },
  ],
  [
    'operatorSetPriceBook',
    { method: 'POST', path: (x) => `${OP}/accounts/${x.accountId}/price-book`, body: { book: 'partner' } },
  ],
  ['operatorRevokeKey', { method: 'POST', path: (x) => `${OP}/keys/${x.keyId}/revoke` }],
  [
    'operatorSetKeyPolicy',
    { method: 'PUT', path: (x) => `${OP}/keys/${x.keyId}/policy`, body: { maxTasksInFlight: 1 } },
  ],
  ['operatorUsers', { method: 'GET', path: () => `${OP}/users?q=grace` }],
  ['operatorAudit', { method: 'GET', path: () => `${OP}/audit` }],
];

describe('the operator console API', () => {
  let t: TestService;
  let operator: ConsoleUser;
  let grace: ConsoleUser;
  let graceAccount: string;
  let graceKey: { apiKey: string; keyId: string };

  /** What an operator action could change: the target's wallet and keys, the ledger, the audit log. */
  const snapshot = async () => {
    const db = t.service.ctx.db.kysely;
    return {
      wallet: await t.wallet(graceAccount),
      keys: await db
        .selectFrom('api_keys')
        .select(['id', 'revoked_at'])
        .where('account_id', '=', graceAccount)
        .execute(),
      ledger: (await db.selectFrom('ledger_entries').select('id').execute()).length,
      audit: (await db.selectFrom('audit_log').select('id').execute()).length,
      roles: await db.selectFrom('users').select(['email', 'role']).orderBy('email').execute(),
    };
  };

  beforeAll(async () => {
    t = await startTestService();
    operator = await signUp(t, 'olive@example.com');
    grace = await signUp(t, 'grace@example.com');
    await setRole(t.service.ctx.db, CLI_OPERATOR, 'olive@example.com', 'operator', Date.now());
    graceAccount = (await grace.call('GET', '/console/api/session')).body.data.accountId;
    graceKey = (await grace.call('POST', '/console/api/keys', {})).body.data;
  });
  afterAll(async () => t?.close());

  it('the table covers every operation the contract marks as the operator’s', () => {
    const operatorOps = consoleRoutes.filter((r) => r.role === 'operator').map((r) => r.operationId);
    expect(OPERATIONS.map(([name]) => name).sort()).toEqual([...operatorOps].sort());
  });

  it('a new user is no operator; the session names the account and the role', async () => {
    const session = (await grace.call('GET', '/console/api/session')).body.data;
    expect(session).toMatchObject({ email: 'grace@example.com', role: 'user' });
    expect(session.accountId).toMatch(/^acct_/);
    expect((await operator.call('GET', '/console/api/session')).body.data.role).toBe('operator');
  });

  it.each(OPERATIONS)('refuses %s to a user without the role: 403 not_operator, nothing changed', async (_, op) => {
    const before = await snapshot();
    const answer = await grace.call(op.method, op.path({ accountId: graceAccount, keyId: graceKey.keyId }), op.body);
    expect([answer.status, answer.body.code, answer.body.data.reason]).toEqual([403, 403, 'not_operator']);
    expect(answer.body.msg).toContain('operators');
    expect(await snapshot()).toEqual(before);
  });

  it.each(OPERATIONS)('refuses %s without a session (401), whatever the role', async (_, op) => {
    const r = await fetch(`${t.url}${op.path({ accountId: graceAccount, keyId: graceKey.keyId })}`, {
      method: op.method,
      headers: op.body ? { 'content-type': 'application/json' } : {},
      body: op.body ? JSON.stringify(op.body) : undefined,
    });
    expect(r.status).toBe(401);
  });

  it('refuses the operator’s changes without the CSRF token, and a bad body before anything is written', async () => {
    const before = await snapshot();
    const noCsrf = await operator.call(
      'POST',
      `${OP}/accounts/${graceAccount}/credits`,
      { credits: 5, note: 'x' },
      { csrf: null },
    );
    expect([noCsrf.status, noCsrf.body.data.reason]).toEqual([403, 'csrf']);
    for (const body of [
      { credits: 0, note: 'x' },
      { credits: 5 },
      { credits: 5, note: '   ' },
      { credits: 1.5, note: 'x' },
    ]) {
      const bad = await operator.call('POST', `${OP}/accounts/${graceAccount}/credits`, body);
      expect(bad.status).toBe(400);
    }
    const unknown = await operator.call('POST', `${OP}/accounts/acct_nope/credits`, { credits: 5, note: 'x' });
    expect([unknown.status, unknown.body.data.reason]).toEqual([404, 'not_found']);
    expect(await snapshot()).toEqual(before);
  });

  it('add credits with an idempotency key: a double submit (even at once) adds them once, with one audit row; a new key adds again', async () => {
    // The operator's own API account: the other tests count what grace's account holds.
    const target = (await operator.call('GET', '/console/api/session')).body.data.accountId;
    const balance = async () => (await operator.call('GET', `${OP}/accounts/${target}`)).body.data.balance;
    const audits = async () => (await operator.call('GET', `${OP}/audit`)).body.data.length;
    const [before, auditsBefore] = [await balance(), await audits()];
    const body = { credits: 250, note: 'double click', idempotencyKey: 'form-7f3a' };
    const both = await Promise.all([1, 2].map(() => operator.call('POST', `${OP}/accounts/${target}/credits`, body)));
    expect(both.map((r) => r.status)).toEqual([200, 200]);
    expect(both.map((r) => r.body.data.added)).toEqual([250, 250]);
    expect(both.map((r) => r.body.data.replayed).sort()).toEqual([false, true]);
    const again = await operator.call('POST', `${OP}/accounts/${target}/credits`, { ...body, credits: 999 });
    expect(again.body.data).toMatchObject({ added: 250, replayed: true });
    expect((await balance()).purchased).toBe(before.purchased + 250);
    expect(await audits()).toBe(auditsBefore + 1);
    const next = await operator.call('POST', `${OP}/accounts/${target}/credits`, {
      ...body,
      idempotencyKey: 'form-8b1c',
    });
    expect(next.body.data).toMatchObject({ added: 250, replayed: false });
    expect((await balance()).purchased).toBe(before.purchased + 500);
    await t.checkLedger(target);
  });

  it('finds an account by its id or the start of it, one made without a user too (an id has `_`, no wildcard)', async () => {
    const { accountId } = await t.account(0); // an account of the CLI, no console user behind it
    for (const q of [accountId, accountId.slice(0, accountId.length - 3)]) {
      const found = await operator.call('GET', `${OP}/accounts?q=${encodeURIComponent(q)}`);
      expect(found.status).toBe(200);
      expect(found.body.data.map((a: { accountId: string }) => a.accountId)).toContain(accountId);
    }
    // `_` and `%` are the id's own characters, not patterns: a prefix with a wildcard in its place finds nothing.
    const wild = `${accountId.slice(0, 4)}%${accountId.slice(5)}`;
    const none = await operator.call('GET', `${OP}/accounts?q=${encodeURIComponent(wild)}`);
    expect(none.body.data.map((a: { accountId: string }) => a.accountId)).not.toContain(accountId);
  });

  it('finds a user by email, adds credits with a note: the ledger and the audit log say who and why', async () => {
    const found = await operator.call('GET', `${OP}/accounts?q=GRACE@`);
    const summary = found.body.data.find((a: { accountId: string }) => a.accountId === graceAccount);
    expect(summary.users).toEqual([
      expect.objectContaining({ email: 'grace@example.com', wallet: 'api', role: 'user' }),
    ]);
    expect(
      found.body.data.every((a: { users: { email: string }[] }) =>
        a.users.some((u) => u.email === 'grace@example.com'),
      ),
    ).toBe(true);

    const added = await operator.call('POST', `${OP}/accounts/${graceAccount}/credits`, {
      credits: 1200,
      note: 'refund for ticket 42',
    });
    expect(added.status).toBe(200);
    expect(added.body.data).toEqual({
      accountId: graceAccount,
      added: 1200,
      replayed: false,
      balance: { available: 1200, held: 0, spent: 0, purchased: 1200 },
    });
    await t.checkLedger(graceAccount);
    const operatorId = (await userRow(t, 'olive@example.com')).id;
    const purchase = await t.service.ctx.db.kysely
      .selectFrom('ledger_entries')
      .select(['kind', 'amount', 'note', 'by_user_id'])
      .where('account_id', '=', graceAccount)
      .executeTakeFirstOrThrow();
    expect(purchase).toEqual({ kind: 'grant', amount: 1200, note: 'refund for ticket 42', by_user_id: operatorId });

    const audit = (await operator.call('GET', `${OP}/audit`)).body.data;
    expect(audit[0]).toMatchObject({
      actor: operatorId,
      actorEmail: 'olive@example.com',
      action: 'credits.add',
      target: graceAccount,
      clientAddress: '127.0.0.1',
      details: { credits: 1200, note: 'refund for ticket 42' },
    });
    expect(Date.parse(audit[0].createdAt)).toBeGreaterThan(Date.now() - 60_000);
    // The user sees the credits in their own console.
    expect((await grace.call('GET', '/console/api/balance')).body.data.api.available).toBe(1200);
  });

  it('shows an account with its balance, usage, keys, users and recent tasks', async () => {
    const task = await createTask(t, graceKey.apiKey, bodyD('a lighthouse at dusk'));
    expect(task.status).toBe(202);
    await waitForTerminal(t, graceKey.apiKey, task.body.data.taskId);
    const detail = (await operator.call('GET', `${OP}/accounts/${graceAccount}`)).body.data;
    expect(detail.accountId).toBe(graceAccount);
    expect(detail.keys.map((k: { keyId: string }) => k.keyId)).toEqual([graceKey.keyId]);
    expect(detail.users.map((u: { email: string }) => u.email)).toEqual(['grace@example.com']);
    expect(detail.recentTasks[0]).toMatchObject({ taskId: task.body.data.taskId, state: 'succeeded', settled: true });
    expect(detail.usage.tasks).toBe(1);
    expect(detail.usage.credits).toBe(detail.recentTasks[0].credits);
    expect(detail.balance.available).toBe(1200 - detail.recentTasks[0].credits);
    const users = (await operator.call('GET', `${OP}/users?q=${graceAccount}`)).body.data;
    expect(users).toEqual([expect.objectContaining({ email: 'grace@example.com', accountId: graceAccount })]);
  });

  it('revokes any account’s key: the API refuses it at once, and the audit log records it once', async () => {
    expect((await t.call('GET', '/api/v1/chat/credit', { key: graceKey.apiKey })).status).toBe(200);
    const revoked = await operator.call('POST', `${OP}/keys/${graceKey.keyId}/revoke`);
    expect(revoked.body.data).toEqual({ revoked: true });
    expect((await t.call('GET', '/api/v1/chat/credit', { key: graceKey.apiKey })).status).toBe(401);
    const again = await operator.call('POST', `${OP}/keys/${graceKey.keyId}/revoke`);
    expect(again.body.data).toEqual({ revoked: false });
    const unknown = await operator.call('POST', `${OP}/keys/key_nope/revoke`);
    expect(unknown.status).toBe(404);
    const audit = (await operator.call('GET', `${OP}/audit`)).body.data;
    expect(audit.filter((e: { action: string }) => e.action === 'key.revoke')).toEqual([
      expect.objectContaining({ target: graceKey.keyId, details: { accountId: graceAccount } }),
    ]);
  });

  it('reads the deployments (what deployments status shows) and the margin report', async () => {
    const deployments = (await operator.call('GET', `${OP}/deployments`)).body.data;
    expect(deployments.map((d: { name: string }) => d.name)).toEqual(
      t.service.ctx.deployments.list().map((d) => d.name),
    );
    for (const d of deployments)
      expect(d).toMatchObject({ state: expect.any(String), inFlight: expect.any(Number), lastFailure: null });
    const margin = (await operator.call('GET', `${OP}/margin`)).body.data;
    expect(margin.since).toBeNull();
    expect(margin.totals.tasks).toBeGreaterThanOrEqual(1);
    expect(margin.rows.reduce((n: number, r: { revenueCredits: number }) => n + r.revenueCredits, 0)).toBe(
      margin.totals.revenueCredits,
    );
    const future = (await operator.call('GET', `${OP}/margin?since=2999-01-01`)).body.data;
    expect(future.totals.tasks).toBe(0);
    expect((await operator.call('GET', `${OP}/margin?since=yesterday`)).status).toBe(400);
  });

  it('a demoted operator is refused from the next request on', async () => {
    await setRole(t.service.ctx.db, CLI_OPERATOR, 'olive@example.com', 'user', Date.now());
    const r = await operator.call('GET', `${OP}/audit`);
    expect([r.status, r.body.data.reason]).toEqual([403, 'not_operator']);
    await setRole(t.service.ctx.db, CLI_OPERATOR, 'olive@example.com', 'operator', Date.now());
    expect((await operator.call('GET', `${OP}/audit`)).status).toBe(200);
  });
});
