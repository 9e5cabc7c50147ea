import { describe, expect, it } from 'vitest';
import { entrySpecificity, modelMatches, mostSpecificEntries } from '../../../catalogue-core/model-patterns.js';

describe('model patterns: whole path segments', () => {
  it.each([
    ['an exact id', { given: ['a/b/c', 'a/b/c'], want: true }],
    ['another id', { given: ['a/b/c', 'a/b/d'], want: false }],
    ['a vendor pattern', { given: ['a/*', 'a/b/c'], want: true }],
    ['a vendor pattern never matches a longer vendor name', { given: ['a/*', 'ab/b/c'], want: false }],
    ['a family pattern', { given: ['a/b/*', 'a/b/c'], want: true }],
    ['a middle * is one segment', { given: ['a/*/c', 'a/b/c'], want: true }],
    ['a middle * is not two', { given: ['a/*/c', 'a/b/x/c'], want: false }],
    ['a final * needs a segment', { given: ['a/b/*', 'a/b'], want: false }],
  ] as const)('modelMatches: %s', (_name, { given, want }) => {
    expect(modelMatches(given[0], given[1])).toBe(want);
  });

  it.each([
    ['an id beats every pattern', { given: 'a/b/c', want: Number.MAX_SAFE_INTEGER }],
    ['a family pattern names two segments', { given: 'a/b/*', want: 2 }],
    ['a vendor pattern names one', { given: 'a/*', want: 1 }],
  ] as const)('entrySpecificity: %s', (_name, { given, want }) => {
    expect(entrySpecificity(given)).toBe(want);
  });

  it.each([
    ['the id wins', { given: [['a/*', 'a/b/*', 'a/b/c'], 'a/b/c'], want: ['a/b/c'] }],
    ['the family beats the vendor', { given: [['a/*', 'a/b/*'], 'a/b/c'], want: ['a/b/*'] }],
    ['none matches', { given: [['x/*'], 'a/b/c'], want: [] }],
    ['a tie is every best entry', { given: [['a/*/c', 'a/b/*'], 'a/b/c'], want: ['a/*/c', 'a/b/*'] }],
  ] as const)('mostSpecificEntries: %s', (_name, { given, want }) => {
    expect(mostSpecificEntries(given[0], given[1])).toEqual(want);
  });
});
