import type { Kysely, Selectable } from 'kysely';
import type { Db } from '../../runtime/storage/dialect.js';
import type { Database } from '../../runtime/storage/schema.js';
import type { TestService } from './service.js';

/**
 * What the service stored, read behind its API: the rows of one table whose columns have the
 * values `where` gives (nothing created, a key's id, a user's stored hash), and how many tasks are
 * open. A suite's own reads (joins, sums, a few columns of many rows) stay with it. Each takes a
 * test service or, for a service in a process of its own, its database.
 */

/** One row of a table as the service stored it. */
export type StoredRow<T extends keyof Database> = Selectable<Database[T]>;

const dbOf = (from: TestService | Db): Db => ('kysely' in from ? from : from.service.ctx.db);

/** The table's rows matching `where`, in the order of `orderBy` when it is given. */
export function storedRows<T extends keyof Database>(
  from: TestService | Db,
  table: T,
  where: Partial<StoredRow<T>>,
  orderBy?: keyof StoredRow<T> & string,
): Promise<StoredRow<T>[]> {
  // The table is chosen by the caller: Kysely's types cannot follow a table name that is a type parameter.
  let query = (dbOf(from).kysely as unknown as Kysely<any>).selectFrom(table).selectAll();
  for (const [column, value] of Object.entries(where)) query = query.where(column, '=', value);
  if (orderBy) query = query.orderBy(orderBy);
  return query.execute() as Promise<StoredRow<T>[]>;
}

/** The one row matching `where`; throws when there is none. */
export async function storedRow<T extends keyof Database>(
  from: TestService | Db,
  table: T,
  where: Partial<StoredRow<T>>,
): Promise<StoredRow<T>> {
  const [row] = await storedRows(from, table, where);
  if (!row) throw new Error(`no ${String(table)} row where ${JSON.stringify(where)}`);
  return row;
}

/** How many tasks are queued or running: all of them, or those pinned to `deployment`. */
export async function openTaskCount(from: TestService | Db, deployment?: string): Promise<number> {
  let query = dbOf(from)
    .kysely.selectFrom('tasks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('state', 'in', ['queued', 'running']);
  if (deployment !== undefined) query = query.where('deployment', '=', deployment);
  return Number((await query.executeTakeFirstOrThrow()).n);
}
