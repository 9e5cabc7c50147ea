import type { Kysely } from 'kysely';

/**
 * Price books (issue 40): accounts.price_book, the book an operator assigned the account (null:
 * the published catalogue, the default book), and tasks.price_book, the book a task was accepted
 * under, so that settlement charges it at that book whatever the account is assigned later.
 * The names are spec/price-books/'s; no foreign key: books are data of the build, not rows.
 */
export function priceBooks() {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('accounts').addColumn('price_book', 'text').execute();
      await db.schema.alterTable('tasks').addColumn('price_book', 'text').execute();
    },
  };
}
