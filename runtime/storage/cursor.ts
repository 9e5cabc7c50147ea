import { ApiError } from '../errors.js';

/**
 * Keyset paging, newest first, on (created_at, id): the cursor is the last row's pair, opaque to
 * clients. Callers fetch `limit + 1` rows after `decodeCursor(cursor)` and hand them to `pageOf`.
 */
export function decodeCursor(cursor: string): [number, string] {
  const match = /^(\d{1,15}):([A-Za-z0-9_-]{1,100})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw new ApiError('invalid_parameter', { param: 'cursor' }, [], 'cursor');
  return [Number(match[1]), match[2]];
}

export function pageOf<T extends { created_at: number; id: string }>(rows: T[], limit: number): { rows: T[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { rows: page, nextCursor: rows.length > limit && last ? Buffer.from(`${last.created_at}:${last.id}`).toString('base64url') : null };
}
