/**
 * The audit log is kept like the ledger (issue 28): retention purges a task's content and the
 * maintenance jobs delete expired rows, but no code deletes an audit entry or a ledger row. And
 * the operator's CLI (users promote/demote/list, accounts list/show, audit), run as a user runs it,
 * on the database of a running service.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyD, createTask } from '../http/helpers.js';
import { mediaforgeCli } from '../support/cli-process.js';
import { ROOT } from '../support/root.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';
import { signUp, type ConsoleUser } from './support.js';
import { eventually } from '../support/eventually.js';
import { tsFiles } from '../support/source-files.js';

/** A statement that deletes rows of, or drops, the audit log or the ledger, in either spelling. */
const DELETES_KEPT_TABLE =
  /(?:deleteFrom|dropTable|truncate)\(\s*['"](?:audit_log|ledger_entries)['"]|(?:delete\s+from|drop\s+table|truncate)\s+"?(?:audit_log|ledger_entries)\b/i;

describe('the audit log is kept like the ledger', { timeout: 600_000 }, () => {
  let t: TestService;
  let operator: ConsoleUser;
  let user: ConsoleUser;

  const cli = (args: string[]) => mediaforgeCli(t.config.dbUrl, args);

  const json = async (args: string[]) => {
    const r = await cli([...args, '--json']);
    if (r.code !== 0) throw new Error(`mediaforge ${args.join(' ')}: ${r.code} ${r.stderr}`);
    return JSON.parse(r.stdout);
  };

  beforeAll(async () => {
    // Every finished task's content is purged a second after it ends.
    t = await startTestService({ retentionSeconds: 1 });
    operator = await signUp(t, 'root@example.com');
    user = await signUp(t, 'lin@example.com');
  });
  afterAll(async () => t?.close());

  it('no runtime code deletes from, drops or truncates audit_log or ledger_entries (the pattern catches each spelling)', () => {
    const offenders = tsFiles('runtime').filter((file) =>
      DELETES_KEPT_TABLE.test(readFileSync(join(ROOT, file), 'utf8')),
    );
    expect(offenders).toEqual([]);
    for (const statement of [
      "db.deleteFrom('audit_log')",
      'trx.deleteFrom("ledger_entries")',
      "db.schema.dropTable('audit_log')",
      'DELETE FROM audit_log WHERE',
      'delete from "ledger_entries"',
      'TRUNCATE audit_log',
    ])
      expect(DELETES_KEPT_TABLE.test(statement), statement).toBe(true);
    expect(DELETES_KEPT_TABLE.test("db.deleteFrom('idempotency_keys')")).toBe(false);
  });

  it('users promote (CLI) grants the role, recorded; users list shows it; sign-up never grants it', async () => {
    expect(
      (await json(['users', 'list', '--email', 'example.com'])).users.map((u: { role: string }) => u.role),
    ).toEqual(['user', 'user']);
    expect(await json(['users', 'promote', '--email', ' ROOT@example.com '])).toMatchObject({
      email: 'root@example.com',
      role: 'operator',
      changed: true,
    });
    expect((await json(['users', 'promote', '--email', 'root@example.com'])).changed).toBe(false);
    const unknown = await cli(['users', 'promote', '--email', 'nobody@example.com']);
    expect([unknown.code, unknown.stderr]).toEqual([
      1,
      expect.stringContaining('no user with the email nobody@example.com'),
    ]);
    const listed = (await json(['users', 'list', '--email', 'root@'])).users;
    expect(listed).toEqual([expect.objectContaining({ email: 'root@example.com', role: 'operator' })]);
    expect((await operator.call('GET', '/console/api/operator/audit')).status).toBe(200);
    expect((await user.call('GET', '/console/api/operator/audit')).status).toBe(403);
  });

  it('keeps every audit entry and ledger row after retention has purged the tasks and the maintenance jobs ran', async () => {
    const accountId = (await user.call('GET', '/console/api/session')).body.data.accountId;
    const granted = await operator.call('POST', `/console/api/operator/accounts/${accountId}/credits`, {
      credits: 900,
      note: 'welcome credits',
    });
    expect(granted.status).toBe(200);
    const { apiKey } = (await user.call('POST', '/console/api/keys', {})).body.data;
    const task = await createTask(t, apiKey, bodyD('the audit survives'));
    await waitForTerminal(t, apiKey, task.body.data.taskId);
    const db = t.service.ctx.db.kysely;
    const auditBefore = await db.selectFrom('audit_log').selectAll().orderBy('id').execute();
    const ledgerBefore = await db.selectFrom('ledger_entries').selectAll().orderBy('id').execute();
    expect(auditBefore.map((e) => e.action)).toEqual(['user.promote', 'credits.add']);
    // Retention runs: the task's content is purged by its work item.
    const purged = await eventually(
      async () => {
        const row = await db
          .selectFrom('tasks')
          .select('purged_at')
          .where('id', '=', task.body.data.taskId)
          .executeTakeFirstOrThrow();
        return row.purged_at !== null && row;
      },
      'the task purged by retention',
      15_000,
    );
    expect(purged.purged_at).not.toBeNull();
    // And the recurring maintenance jobs have run at least once since the service started.
    // (Each one, once run, is due again an hour later.)
    const ran = (rows: { due_at: number }[]) =>
      rows.length >= 2 && rows.every((r) => Number(r.due_at) > Date.now() + 1_800_000);
    const maintenance = await eventually(
      async () => {
        const rows = await db
          .selectFrom('work_items')
          .select(['kind', 'due_at'])
          .where('kind', 'in', ['expire-idempotency-keys', 'expire-uploads'])
          .where('done_at', 'is', null)
          .execute();
        return ran(rows) && rows;
      },
      'the maintenance jobs run once',
      15_000,
    );
    expect(ran(maintenance)).toBe(true);
    expect(await db.selectFrom('audit_log').selectAll().orderBy('id').execute()).toEqual(auditBefore);
    expect(await db.selectFrom('ledger_entries').selectAll().orderBy('id').execute()).toEqual(ledgerBefore);
    await t.checkLedger(accountId);
  });

  it('accounts list --email, accounts show and audit --json read what the console shows', async () => {
    const accounts = (await json(['accounts', 'list', '--email', 'lin@'])).accounts;
    const api = accounts.find((a: { users: { wallet: string }[] }) => a.users[0].wallet === 'api');
    expect(api.balance.purchased).toBe(900);
    const shown = await json(['accounts', 'show', api.accountId]);
    expect(shown).toMatchObject({ accountId: api.accountId, usage: { tasks: 1 } });
    expect(shown.keys).toHaveLength(1);
    expect(shown.recentTasks[0].state).toBe('succeeded');
    const text = await cli(['accounts', 'show', api.accountId]);
    expect(text.stdout).toContain(`account ${api.accountId}`);
    expect(text.stdout).toContain('lin@example.com (user, api)');
    const missing = await cli(['accounts', 'show', 'acct_nope']);
    expect([missing.code, missing.stderr]).toEqual([1, expect.stringContaining('no account acct_nope')]);
    const audit = (await json(['audit'])).entries;
    expect(audit.map((e: { action: string; actor: string }) => [e.action, e.actor === 'cli'])).toEqual([
      ['credits.add', false],
      ['user.promote', true],
    ]);
    expect(audit[0]).toMatchObject({
      actorEmail: 'root@example.com',
      clientAddress: '127.0.0.1',
      target: api.accountId,
    });
    expect(await json(['users', 'demote', '--email', 'root@example.com'])).toMatchObject({
      role: 'user',
      changed: true,
    });
    expect((await operator.call('GET', '/console/api/operator/audit')).status).toBe(403);
  });

  it('keys revoke (CLI) is recorded like a revocation in the console; revoking it again writes nothing', async () => {
    const api = (await json(['accounts', 'list', '--email', 'lin@'])).accounts.find(
      (a: { users: { wallet: string }[] }) => a.users[0].wallet === 'api',
    );
    const [key] = (await json(['accounts', 'show', api.accountId])).keys;
    expect(key.revokedAt).toBeNull();
    const revoked = await cli(['keys', 'revoke', '--key', key.keyId]);
    expect([revoked.code, revoked.stdout.trim()]).toEqual([0, 'revoked']);
    const [newest, ...older] = (await json(['audit'])).entries;
    expect(newest).toMatchObject({
      action: 'key.revoke',
      actor: 'cli',
      target: key.keyId,
      clientAddress: null,
      details: { accountId: api.accountId },
    });
    const again = await cli(['keys', 'revoke', '--key', key.keyId]);
    expect([again.code, again.stdout.trim()]).toEqual([1, 'no such active key']);
    expect((await json(['audit'])).entries).toEqual([newest, ...older]);
  });

  it('every other operator action of the CLI writes its audit row (actor cli), never with the key or secret it made', async () => {
    const created = await json(['accounts', 'create', '--credits', '5']);
    await json(['accounts', 'set', '--account', created.accountId, '--language', 'de']);
    const key = await json(['keys', 'create', '--account', created.accountId]);
    const rotated = await json(['webhooks', 'rotate-secret', '--account', created.accountId]);
    const entries = (await json(['audit', '--limit', '4'])).entries;
    expect(
      entries.map((e: { action: string; actor: string; target: string }) => [e.action, e.actor, e.target]),
    ).toEqual([
      ['webhook.rotate-secret', 'cli', created.accountId],
      ['key.create', 'cli', key.keyId],
      ['account.set', 'cli', created.accountId],
      ['account.create', 'cli', created.accountId],
    ]);
    expect(entries[3].details).toEqual({ credits: 5, language: null });
    expect(entries[2].details).toEqual({ language: 'de' });
    expect(entries[1].details).toEqual({ accountId: created.accountId, workspace: 'personal' });
    const text = JSON.stringify(entries);
    for (const secret of [created.apiKey, created.webhookSecret, key.apiKey, rotated.webhookSecret])
      expect(text).not.toContain(secret);
  });

  it('sign-up refuses an email with a control or bidirectional character; the CLI prints stored ones escaped', async () => {
    for (const email of ['esc\u001b[31m@example.com', 'gro\u202Emoc.evil@example.com', 'zero\u200b@example.com']) {
      const refused = await fetch(`${t.url}/console/api/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-requested-with': 'mediaforge-console' },
        body: JSON.stringify({ email, password: 'correct horse battery' }),
      });
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { data: { reason: string } }).data.reason).toBe('invalid_email');
    }
    // A note (and an address stored before sign-up refused them) reaches the tables as written.
    const api = (await json(['accounts', 'list', '--email', 'lin@'])).accounts[0];
    const note = 'bonus \u001b]0;owned\u0007 \u202Etxt.exe';
    expect((await cli(['credits', 'add', '--account', api.accountId, '--credits', '1', '--note', note])).code).toBe(0);
    await t.service.ctx.db.kysely
      .updateTable('users')
      .set({ email: 'lin\u001b[2J\u202E@example.com' })
      .where('email', '=', 'lin@example.com')
      .execute();
    const raw = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/;
    for (const args of [['audit'], ['users', 'list'], ['accounts', 'list'], ['accounts', 'show', api.accountId]]) {
      for (const format of [[], ['--json']]) {
        const out = await cli([...args, ...format]);
        expect(out.code, args.join(' ')).toBe(0);
        expect(out.stdout, args.join(' ')).not.toMatch(raw);
      }
    }
    expect((await cli(['users', 'list'])).stdout).toContain('lin\\u001b[2J\\u202e@example.com');
    // JSON output stays JSON: the escapes parse back to the stored value.
    expect((await json(['audit'])).entries[0].details.note).toBe(note);
    expect((await json(['users', 'list'])).users.map((u: { email: string }) => u.email)).toContain(
      'lin\u001b[2J\u202E@example.com',
    );
  });
});
