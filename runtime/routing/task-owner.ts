import type { Executor } from '../storage/executor.js';

/** Whose evidence a failed task is, and whether it counts toward a cool-down for everyone. */
export interface TaskOwner {
  /** The console user behind the account (API or playground account), or the account itself where no user has it. */
  ownerId: string;
  /** A paying account that is not a playground: free credits alone give no evidence against a deployment for everyone. */
  countsGlobally: boolean;
}

/**
 * The owner of an account. Every console user has two accounts (the API one and the playground),
 * so evidence is counted by owner, never by account: one person cannot pass for two. Read only
 * when a call fails or a cool-down is on record, never on the request path of a healthy service.
 */
export async function ownerOf(db: Executor, accountId: string): Promise<TaskOwner> {
  const row = await db
    .selectFrom('accounts')
    .leftJoin('users', (join) =>
      join.on((eb) =>
        eb.or([
          eb('users.account_id', '=', eb.ref('accounts.id')),
          eb('users.playground_account_id', '=', eb.ref('accounts.id')),
        ]),
      ),
    )
    .leftJoin('wallets', 'wallets.account_id', 'accounts.id')
    .select(['users.id as user_id', 'users.playground_account_id', 'wallets.purchased'])
    .where('accounts.id', '=', accountId)
    .executeTakeFirst();
  const playground = row?.playground_account_id === accountId;
  return {
    ownerId: row?.user_id ? `user:${row.user_id}` : `account:${accountId}`,
    countsGlobally: !playground && Number(row?.purchased ?? 0) > 0,
  };
}
