import type { ExpressionBuilder } from 'kysely';
import { ApiError } from '../errors.js';
import type { Database } from './schema.js';

/**
 * Keyset paging, newest first, on (created_at, id): the cursor is the last row's pair, opaque to
 * clients. Callers fetch `limit + 1` rows after `decodeCursor(cursor)` (filtered with `keysetAfter`)
 * and hand them to `pageOf`.
 */
export function decodeCursor(cursor: string): [number, string] {
  const match = /^(\d{1,15}):([A-Za-z0-9_-]{1,100})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw new ApiError('invalid_parameter', { param: 'cursor' });
  return [Number(match[1]), match[2]];
}

export function pageOf<T extends { created_at: number; id: string }>(
  rows: T[],
  limit: number,
): { rows: T[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    rows: page,
    nextCursor: rows.length > limit && last ? Buffer.from(`${last.created_at}:${last.id}`).toString('base64url') : null,
  };
}

/** The tables paged by (created_at, id). */
type Paged = 'tasks' | 'assets';

/**
 * The keyset condition: rows strictly after `position` in the (created_at, id) order, `desc`
 * (newest first, the default) or `asc`. The one place this condition is written. It is one row-value
 * comparison, `(created_at, id) < (?, ?)`, which both engines turn into a range of an index ending
 * in (created_at, id) (tasks_by_key, assets_by_library): the page starts at the cursor. Spelled as
 * `created_at < ? OR (created_at = ? AND id < ?)`, SQLite walked the index from the newest row and
 * filtered, so a cursor deep into a million tasks cost the rows above it (bench/growth.ts).
 */
export function keysetAfter<T extends Paged>(
  eb: ExpressionBuilder<Database, T>,
  position: { createdAt: number; id: string },
  order: 'asc' | 'desc' = 'desc',
) {
  // Both tables have the pair with the same types; the builder is read as one of them to name the columns.
  const b = eb as unknown as ExpressionBuilder<Database, 'tasks'>;
  return b(b.refTuple('created_at', 'id'), order === 'desc' ? '<' : '>', b.tuple(position.createdAt, position.id));
}
