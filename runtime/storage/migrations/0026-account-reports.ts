import type { Kysely } from 'kysely';

/**
 * The account-reports scope of an API key (issue 39): api_keys.account_reports, 1 when the key may
 * read its account's statements and account-wide usage (GET /api/v1/statements/{month},
 * GET /api/v1/usage?scope=account). Off (0) by default: a key handed to a script sees only its own
 * usage; the operator turns the scope on (`mediaforge keys scope`).
 */
export function accountReports() {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable('api_keys')
        .addColumn('account_reports', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
    },
  };
}
