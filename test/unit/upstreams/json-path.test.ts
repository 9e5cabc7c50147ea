import { describe, expect, it } from 'vitest';
import { valueAtPath, valuesAt } from '../../../runtime/upstreams/json-path.js';

/** runtime/upstreams/json-path.ts: a provider profile's JSON paths (`render.files[*].href`). */

const RESULT = {
  id: 'job-1',
  output: ['https://a.example/1.mp4', 'https://a.example/2.mp4'],
  render: { files: [{ href: 'https://a.example/v.mp4' }, { kind: 'thumb' }, { href: 'https://a.example/w.mp4' }] },
  empty: null,
  zero: 0,
  flag: false,
  list: [[1, 2], [3]],
};

describe('valuesAt', () => {
  it.each([
    ['a top-level name', { given: 'id', want: ['job-1'] }],
    ['a nested name', { given: 'render.files[0].href', want: ['https://a.example/v.mp4'] }],
    ['one element', { given: 'output[1]', want: ['https://a.example/2.mp4'] }],
    ['every element', { given: 'output[*]', want: ['https://a.example/1.mp4', 'https://a.example/2.mp4'] }],
    [
      'a name under every element, skipping those without it',
      { given: 'render.files[*].href', want: ['https://a.example/v.mp4', 'https://a.example/w.mp4'] },
    ],
    ['an index past the end', { given: 'output[5]', want: [] }],
    ['a missing name', { given: 'render.video', want: [] }],
    ['a null value, left out', { given: 'empty', want: [] }],
    ['zero and false, kept', { given: 'zero', want: [0] }],
    ['false', { given: 'flag', want: [false] }],
    ['an index into an object', { given: 'render[0]', want: [] }],
    ['a name into an array', { given: 'output.length', want: [] }],
    ['every element of every element', { given: 'list[*][*]', want: [1, 2, 3] }],
    ['an inherited name, which JSON does not have', { given: 'id.toString', want: [] }],
  ])('reads %s', (_name, { given, want }) => {
    expect(valuesAt(RESULT, given)).toEqual(want);
  });
});

describe('valueAtPath', () => {
  it.each([
    ['the first of several', { given: 'render.files[*].href', want: 'https://a.example/v.mp4' }],
    ['nothing', { given: 'render.none', want: undefined }],
  ])('answers %s', (_name, { given, want }) => {
    expect(valueAtPath(RESULT, given)).toEqual(want);
  });
});
