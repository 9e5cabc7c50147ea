import { accountsByIdPrefix, accountsByIds } from '../accounts/accounts.js';
import { keysWithPolicy } from '../accounts/key-policy-state.js';
import { DEFAULT_BOOK, priceBookChoices, priceBookOfAccount } from '../accounts/price-book.js';
import { searchUsers, usersOfAccounts, type UserRole, type UserRow } from '../accounts/users.js';
import type { Balance } from '../ledger/ledger.js';
import { walletsOf } from '../ledger/wallets.js';
import type { Db } from '../storage/dialect.js';
import type { TaskState } from '../tasks/states.js';
import { recentTasksOfAccounts, usageRows } from '../tasks/task-rows.js';

const DAY_MS = 24 * 3600 * 1000;
/** How many rows a search answers: the operator narrows the query rather than pages. */
export const SEARCH_LIMIT = 50;
const RECENT_TASKS = 20;
const USAGE_DAYS = 30;

const iso = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

export interface AccountUser {
  userId: string;
  email: string;
  role: UserRole;
  /** Which of the user's two accounts this is: the API account or the playground's free credits. */
  wallet: 'api' | 'playground';
}

export interface AccountSummary {
  accountId: string;
  createdAt: string;
  balance: Balance;
  users: AccountUser[];
}

export interface AccountDetail extends AccountSummary {
  /** The account's price book (`default`: the published prices) and every name it may be assigned. */
  priceBook: string;
  priceBooks: string[];
  usage: { days: number; tasks: number; credits: number; byModel: { model: string; tasks: number; credits: number }[] };
  /** Each key with its policy and what it has used (the owner's keys page shows the same). */
  keys: Awaited<ReturnType<typeof keysWithPolicy>>;
  recentTasks: {
    taskId: string;
    model: string;
    state: TaskState;
    credits: number;
    settled: boolean;
    errorCode: string | null;
    createdAt: string;
  }[];
}

export interface UserSummary {
  userId: string;
  email: string;
  role: UserRole;
  accountId: string;
  playgroundAccountId: string;
  createdAt: string;
}

function userOf(row: UserRow, accountId: string): AccountUser {
  return {
    userId: row.id,
    email: row.email,
    role: row.role,
    wallet: row.account_id === accountId ? 'api' : 'playground',
  };
}

export function userSummary(row: UserRow): UserSummary {
  return {
    userId: row.id,
    email: row.email,
    role: row.role,
    accountId: row.account_id,
    playgroundAccountId: row.playground_account_id,
    createdAt: iso(row.created_at)!,
  };
}

async function summaries(db: Db, accounts: { id: string; created_at: number }[]): Promise<AccountSummary[]> {
  const ids = accounts.map((a) => a.id);
  const [wallets, users] = await Promise.all([walletsOf(db.kysely, ids), usersOfAccounts(db.kysely, ids)]);
  return accounts.map((a) => ({
    accountId: a.id,
    createdAt: iso(a.created_at)!,
    balance: wallets.get(a.id) ?? { available: 0, held: 0, spent: 0, purchased: 0, owed: 0, reversed: 0 },
    users: users.filter((u) => u.account_id === a.id || u.playground_account_id === a.id).map((u) => userOf(u, a.id)),
  }));
}

/**
 * The accounts an operator's query finds, newest first: every account (no query); the accounts of
 * the users whose email contains it or whose id it is; the accounts whose id starts with it.
 */
export async function findAccounts(db: Db, query: string | undefined): Promise<AccountSummary[]> {
  const q = query?.trim() ?? '';
  const [byId, users] = await Promise.all([
    accountsByIdPrefix(db.kysely, q, SEARCH_LIMIT),
    q ? searchUsers(db.kysely, q, SEARCH_LIMIT) : Promise.resolve([]),
  ]);
  const ofUsers = await accountsByIds(
    db.kysely,
    users.flatMap((u) => [u.account_id, u.playground_account_id]),
  );
  const seen = new Map<string, { id: string; created_at: number }>();
  for (const a of [...ofUsers, ...byId]) seen.set(a.id, a);
  const accounts = [...seen.values()]
    .sort((a, b) => Number(b.created_at) - Number(a.created_at) || (a.id < b.id ? 1 : -1))
    .slice(0, SEARCH_LIMIT);
  return summaries(db, accounts);
}

/** One account with its balance, users, keys, usage of the last 30 days and newest tasks; undefined when unknown. */
export async function accountDetail(db: Db, accountId: string, now: number): Promise<AccountDetail | undefined> {
  const [account] = await accountsByIds(db.kysely, [accountId]);
  if (!account) return undefined;
  const to = now - (now % DAY_MS) + DAY_MS;
  const [[summary], keys, usage, tasks, book] = await Promise.all([
    summaries(db, [account]),
    keysWithPolicy(db, accountId, now),
    usageRows(db.kysely, { accountIds: [accountId] }, to - USAGE_DAYS * DAY_MS, to),
    recentTasksOfAccounts(db.kysely, [accountId], RECENT_TASKS),
    priceBookOfAccount(db.kysely, accountId),
  ]);
  const byModel = new Map<string, { tasks: number; credits: number }>();
  let credits = 0;
  for (const row of usage) {
    const charged = row.settled === 1 ? Number(row.charged_credits ?? 0) : 0;
    credits += charged;
    const model = byModel.get(row.model) ?? { tasks: 0, credits: 0 };
    model.tasks += 1;
    model.credits += charged;
    byModel.set(row.model, model);
  }
  return {
    ...summary,
    priceBook: book ?? DEFAULT_BOOK,
    priceBooks: priceBookChoices(),
    usage: {
      days: USAGE_DAYS,
      tasks: usage.length,
      credits,
      byModel: [...byModel.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([model, m]) => ({ model, ...m })),
    },
    keys,
    recentTasks: tasks.map((t) => ({
      taskId: t.id,
      model: t.model,
      state: t.state as TaskState,
      credits: t.settled === 1 ? Number(t.charged_credits ?? 0) : Number(t.max_credits),
      settled: t.settled === 1,
      errorCode: t.error_code,
      createdAt: iso(t.created_at)!,
    })),
  };
}

/** The users an operator's query finds (email contains it, or it is a user or account id), newest first. */
export async function findUsers(db: Db, query: string | undefined): Promise<UserSummary[]> {
  return (await searchUsers(db.kysely, query, SEARCH_LIMIT)).map(userSummary);
}
