/** The operator's commands: users list/promote/demote, accounts list/show, audit (runtime/cli/commands.ts lists their flags). */
import { auditEntries } from '../../audit/audit-log.js';
import { normalizeEmail } from '../../console/users.js';
import { accountDetail, findAccounts, findUsers } from '../../operator/account-directory.js';
import { CLI_OPERATOR, setRole } from '../../operator/operator-actions.js';
import { commandConfig, withCommandDb } from '../command-db.js';
import type { CommandInput } from '../commands.js';
import { printSafe } from '../terminal-text.js';
import { UsageError } from '../usage-error.js';

type Values = CommandInput['values'];

function print(values: Values, value: unknown, text: string) {
  printSafe(Boolean(values.json), value, text);
}

const text = (value: string | boolean | undefined) => (typeof value === 'string' ? value : undefined);

/** --email as sign-up stores it (trimmed, lower case); a malformed one is a usage error. */
function email(values: Values): string {
  try {
    return normalizeEmail(text(values.email));
  } catch {
    throw new UsageError(`--email must be an email address (got ${String(values.email)})`);
  }
}

export async function usersList({ values }: CommandInput): Promise<number> {
  const users = await withCommandDb(commandConfig(values), (db) => findUsers(db, text(values.email)));
  print(
    values,
    { users },
    users.length
      ? users.map((u) => `${u.email} ${u.role} user ${u.userId} account ${u.accountId}`).join('\n')
      : 'no users',
  );
  return 0;
}

async function changeRole(values: Values, role: 'operator' | 'user'): Promise<number> {
  const address = email(values);
  const result = await withCommandDb(commandConfig(values), (db) =>
    setRole(db, CLI_OPERATOR, address, role, Date.now()),
  );
  if (!result) {
    console.error(`mediaforge: no user with the email ${address} (they sign up in the console first)`);
    return 1;
  }
  print(
    values,
    { email: address, userId: result.userId, role, changed: result.changed },
    result.changed ? `${address} is now ${role === 'operator' ? 'an operator' : 'a user'}` : `${address} already was`,
  );
  return 0;
}

export const usersPromote = ({ values }: CommandInput) => changeRole(values, 'operator');
export const usersDemote = ({ values }: CommandInput) => changeRole(values, 'user');

export async function accountsList({ values }: CommandInput): Promise<number> {
  const accounts = await withCommandDb(commandConfig(values), (db) => findAccounts(db, text(values.email)));
  print(
    values,
    { accounts },
    accounts.length
      ? accounts
          .map(
            (a) =>
              `${a.accountId} available ${a.balance.available} held ${a.balance.held} spent ${a.balance.spent}${a.users.map((u) => ` ${u.email} (${u.wallet})`).join('')}`,
          )
          .join('\n')
      : 'no accounts',
  );
  return 0;
}

export async function accountsShow({ values, positionals }: CommandInput): Promise<number> {
  const accountId = positionals[0];
  if (!accountId) throw new UsageError('accounts show needs the account id: mediaforge accounts show ACCOUNT_ID');
  const detail = await withCommandDb(commandConfig(values), (db) => accountDetail(db, accountId, Date.now()));
  if (!detail) {
    console.error(`mediaforge: no account ${accountId}`);
    return 1;
  }
  const b = detail.balance;
  print(
    values,
    detail,
    [
      `account ${detail.accountId} (created ${detail.createdAt})`,
      `balance: available ${b.available}, held ${b.held}, spent ${b.spent}, purchased ${b.purchased}`,
      `usage (last ${detail.usage.days} days): ${detail.usage.tasks} tasks, ${detail.usage.credits} credits`,
      ...detail.usage.byModel.map((m) => `  ${m.model}: ${m.tasks} tasks, ${m.credits} credits`),
      `users: ${detail.users.map((u) => `${u.email} (${u.role}, ${u.wallet})`).join(', ') || 'none'}`,
      `keys:${detail.keys.length ? '' : ' none'}`,
      ...detail.keys.map(
        (k) => `  ${k.keyId} ${k.prefix}… ${k.workspace}${k.revokedAt ? ` revoked ${k.revokedAt}` : ''}`,
      ),
      `recent tasks:${detail.recentTasks.length ? '' : ' none'}`,
      ...detail.recentTasks.map((x) => `  ${x.taskId} ${x.model} ${x.state} ${x.credits} credits ${x.createdAt}`),
    ].join('\n'),
  );
  return 0;
}

export async function audit({ values }: CommandInput): Promise<number> {
  const limit = text(values.limit) === undefined ? 100 : Number(text(values.limit));
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 10_000)
    throw new UsageError('--limit must be a whole number from 1 to 10000');
  const entries = await withCommandDb(commandConfig(values), (db) => auditEntries(db.kysely, limit));
  print(
    values,
    { entries },
    entries.length
      ? entries
          .map(
            (e) =>
              `${e.createdAt} ${e.actorEmail ?? e.actor}${e.clientAddress ? ` from ${e.clientAddress}` : ''} ${e.action} ${e.target ?? ''} ${JSON.stringify(e.details)}`,
          )
          .join('\n')
      : 'no entries',
  );
  return 0;
}
