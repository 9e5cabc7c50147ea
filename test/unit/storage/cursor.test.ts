import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../runtime/errors.js';
import { decodeCursor, pageOf } from '../../../runtime/storage/cursor.js';

/** runtime/storage/cursor.ts: the opaque keyset cursor on (created_at, id) and a page cut from limit + 1 rows. */

const cursorOf = (text: string) => Buffer.from(text).toString('base64url');
const row = (created_at: number, id: string) => ({ created_at, id });

describe('decodeCursor', () => {
  it.each([
    ['a pair', { given: cursorOf('1700000000000:tsk_abc'), want: [1700000000000, 'tsk_abc'] }],
    ['an id with - and _', { given: cursorOf('5:a-b_C9'), want: [5, 'a-b_C9'] }],
    ['15 digits, the most a time may have', { given: cursorOf('999999999999999:x'), want: [999999999999999, 'x'] }],
    ['an id of 100 characters', { given: cursorOf(`1:${'a'.repeat(100)}`), want: [1, 'a'.repeat(100)] }],
  ])('reads %s', (_name, { given, want }) => {
    expect(decodeCursor(given)).toEqual(want);
  });

  it.each([
    ['an empty cursor', { given: '' }],
    ['no colon', { given: cursorOf('1700000000000') }],
    ['a time that is not digits', { given: cursorOf('17e3:tsk_abc') }],
    ['a negative time', { given: cursorOf('-1:tsk_abc') }],
    ['16 digits', { given: cursorOf('1000000000000000:x') }],
    ['an empty id', { given: cursorOf('1:') }],
    ['an id of 101 characters', { given: cursorOf(`1:${'a'.repeat(101)}`) }],
    ['an id with a quote', { given: cursorOf("1:a'b") }],
    ['an id with a second colon', { given: cursorOf('1:a:b') }],
    ['the pair in clear, not base64url', { given: '1:abc' }],
  ])('refuses %s as invalid_parameter naming cursor', (_name, { given }) => {
    const error = (() => {
      try {
        decodeCursor(given);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ errorName: 'invalid_parameter', param: 'cursor' });
  });
});

describe('pageOf', () => {
  it.each([
    ['no rows', { given: { rows: [], limit: 2 }, want: { ids: [], next: null } }],
    ['fewer rows than the limit', { given: { rows: [row(3, 'c')], limit: 2 }, want: { ids: ['c'], next: null } }],
    [
      'exactly the limit: no next page',
      { given: { rows: [row(3, 'c'), row(2, 'b')], limit: 2 }, want: { ids: ['c', 'b'], next: null } },
    ],
    [
      'one row more than the limit: the cursor is the last row kept',
      {
        given: { rows: [row(3, 'c'), row(2, 'b'), row(1, 'a')], limit: 2 },
        want: { ids: ['c', 'b'], next: [2, 'b'] },
      },
    ],
    ['a limit of one', { given: { rows: [row(9, 'z'), row(8, 'y')], limit: 1 }, want: { ids: ['z'], next: [9, 'z'] } }],
  ])('cuts %s', (_name, { given, want }) => {
    const page = pageOf(given.rows, given.limit);
    expect(page.rows.map((r) => r.id)).toEqual(want.ids);
    expect(page.nextCursor === null ? null : decodeCursor(page.nextCursor)).toEqual(want.next);
  });
});
