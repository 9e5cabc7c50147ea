import { isPriceBook, PRICE_BOOK_NAMES } from '../../generated/price-books.js';
import { recordAudit } from '../audit/audit-log.js';
import type { ActingOperator } from '../operator/operator-actions.js';
import type { Db } from '../storage/dialect.js';
import type { Executor } from '../storage/executor.js';
import { recordKeyRevocation } from './key-revision.js';

/** What names the published catalogue where a book name is asked for (the CLI, the console): no book. */
export const DEFAULT_BOOK = 'default';

/**
 * A book name as an operator writes it: `default` is the published catalogue (null), any other
 * must be a book of spec/price-books/; undefined when it is neither (the caller refuses with the list).
 */
export function parsePriceBook(name: string): string | null | undefined {
  if (name === DEFAULT_BOOK) return null;
  return isPriceBook(name) ? name : undefined;
}

/** Every name an operator may give: the books, then `default`. */
export function priceBookChoices(): string[] {
  return [...PRICE_BOOK_NAMES, DEFAULT_BOOK];
}

/**
 * Assigns an account to a book (null: the published catalogue) with its audit row
 * `account.price_book` in one transaction. The key revision moves as for a revocation: callers
 * carry their account's book (Caller.priceBook), so every process prices the account's next
 * request at the new book. Tasks already accepted keep theirs (tasks.price_book).
 * Undefined for an unknown account; else the book before and after.
 */
export async function setAccountPriceBook(
  db: Db,
  by: ActingOperator,
  accountId: string,
  book: string | null,
  now: number,
): Promise<{ from: string | null; to: string | null } | undefined> {
  return db.kysely.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('accounts').select('price_book').where('id', '=', accountId).executeTakeFirst();
    if (!row) return undefined;
    await trx.updateTable('accounts').set({ price_book: book }).where('id', '=', accountId).execute();
    await recordKeyRevocation(db, trx);
    const change = { from: row.price_book, to: book };
    await recordAudit(
      trx,
      {
        actor: by.actor,
        action: 'account.price_book',
        target: accountId,
        clientAddress: by.clientAddress,
        details: change,
      },
      now,
    );
    return change;
  });
}

/** An account's book (null: the published catalogue, or no such account): the playground's caller reads it. */
export async function priceBookOfAccount(db: Executor, accountId: string): Promise<string | null> {
  const row = await db.selectFrom('accounts').select('price_book').where('id', '=', accountId).executeTakeFirst();
  return row?.price_book ?? null;
}
