import { describe, expect, it } from 'vitest';
import { cloneJson, countItems, given, MAX_JSON_DEPTH, tooDeepPath } from '../../../catalogue-core/json-values.js';

/** `depth` levels of `{ a: ... }` around a leaf. */
const nested = (depth: number): unknown => (depth === 0 ? 1 : { a: nested(depth - 1) });

describe('json values', () => {
  it.each([
    ['a primitive', { given: 5 }],
    ['an object with arrays', { given: { a: [1, { b: 'x' }], c: null } }],
    ['an array of arrays', { given: [[1], [2, [3]]] }],
  ])('cloneJson copies %s deeply', (_name, { given: value }) => {
    const copy = cloneJson(value);
    expect(copy).toEqual(value);
    if (typeof value === 'object') expect(copy).not.toBe(value);
  });

  it('cloneJson never shares a nested object with the original', () => {
    const original = { a: { b: [1] } };
    const copy = cloneJson(original);
    copy.a.b.push(2);
    expect(original.a.b).toEqual([1]);
  });

  it.each([
    ['a flat input', { given: { value: { a: 1 }, limit: 3 }, want: undefined }],
    ['at the limit', { given: { value: nested(3), limit: 3 }, want: undefined }],
    ['one past the limit', { given: { value: nested(4), limit: 3 }, want: 'input.a.a.a' }],
    ['inside an array', { given: { value: { l: [[[1]]] }, limit: 2 }, want: 'input.l[0]' }],
    [
      'the default limit',
      { given: { value: nested(MAX_JSON_DEPTH + 1), limit: undefined }, want: `input${'.a'.repeat(MAX_JSON_DEPTH)}` },
    ],
  ])('tooDeepPath: %s', (_name, { given: { value, limit }, want }) => {
    expect(tooDeepPath(value, limit)).toBe(want);
  });

  it.each([
    ['a string', { given: 'x', want: true }],
    ['zero', { given: 0, want: true }],
    ['false', { given: false, want: true }],
    ['a list with an item', { given: [1], want: true }],
    ['undefined', { given: undefined, want: false }],
    ['null', { given: null, want: false }],
    ['an empty list', { given: [], want: false }],
  ])('given: %s', (_name, { given: value, want }) => {
    expect(given(value)).toBe(want);
  });

  it.each([
    ['a list', { given: [1, 2, 3], want: 3 }],
    ['not a list', { given: 'abc', want: 0 }],
    ['absent', { given: undefined, want: 0 }],
  ])('countItems: %s', (_name, { given: value, want }) => {
    expect(countItems(value)).toBe(want);
  });
});
