import { describe, expect, it } from 'vitest';
import { type AjvError, fieldPath, mapAjvErrors } from '../../../catalogue-core/ajv-errors.js';

const error = (
  keyword: string,
  instancePath: string,
  params: Record<string, unknown>,
  schemaPath = `#/${keyword}`,
): AjvError => ({
  keyword,
  instancePath,
  schemaPath,
  params,
});

/** A field problem as mapAjvErrors lists it: its message's parameters always name the field. */
const problem = (path: string, rule: string, key: string, params: Record<string, unknown> = {}) => ({
  path,
  rule,
  message: { key, params: { ...params, field: path } },
});

describe('ajv errors as field problems', () => {
  it.each([
    ['the input itself', { given: [''], want: 'input' }],
    ['a field', { given: ['', 'prompt'], want: 'input.prompt' }],
    ['an index and a field', { given: ['/loras/0/scale'], want: 'input.loras[0].scale' }],
    ['escaped pointer characters', { given: ['/a~1b/c~0d'], want: 'input.a/b.c~d' }],
  ] as const)('fieldPath: %s', (_name, { given, want }) => {
    expect(fieldPath(given[0], given[1])).toBe(want);
  });

  it.each([
    [
      'a missing field',
      {
        given: [error('required', '', { missingProperty: 'prompt' })],
        want: [problem('input.prompt', 'required', 'required')],
      },
    ],
    [
      'an unknown field',
      {
        given: [error('additionalProperties', '', { additionalProperty: 'colour' })],
        want: [problem('input.colour', 'unknown_field', 'unknown_field')],
      },
    ],
    [
      'a wrong type',
      {
        given: [error('type', '/seed', { type: 'integer' })],
        want: [problem('input.seed', 'type', 'type', { type: 'integer' })],
      },
    ],
    [
      'a value outside an enum',
      {
        given: [error('enum', '/resolution', { allowedValues: ['720p', '1080p'] })],
        want: [problem('input.resolution', 'enum', 'enum', { values: '720p, 1080p' })],
      },
    ],
    [
      'a const is an enum of one',
      {
        given: [error('const', '/mode', { allowedValue: 'std' })],
        want: [problem('input.mode', 'enum', 'enum', { values: 'std' })],
      },
    ],
    [
      'a limit',
      {
        given: [error('maxLength', '/prompt', { limit: 10 })],
        want: [problem('input.prompt', 'maxLength', 'max_length', { limit: 10 })],
      },
    ],
    [
      'the same problem twice is listed once',
      {
        given: [error('minimum', '/n', { limit: 1 }), error('minimum', '/n', { limit: 1 })],
        want: [problem('input.n', 'minimum', 'minimum', { limit: 1 })],
      },
    ],
  ])('mapAjvErrors: %s', (_name, { given, want }) => {
    expect(mapAjvErrors(given, {}, {})).toEqual(want);
  });

  it.each([
    [
      "a pattern's own message",
      {
        given: {
          errors: [error('pattern', '/image_url', {}, '#/properties/image_url/pattern')],
          patterns: { '#/properties/image_url/pattern': 'reference_url' },
          ranges: {},
        },
        want: [problem('input.image_url', 'pattern', 'reference_url')],
      },
    ],
    [
      'a range with an auto value, its branches folded into one problem',
      {
        given: {
          errors: [
            error('minimum', '/duration', { limit: 4 }, '#/properties/duration/anyOf/0/minimum'),
            error('const', '/duration', { allowedValue: -1 }, '#/properties/duration/anyOf/1/const'),
            error('anyOf', '/duration', {}, '#/properties/duration/anyOf'),
          ],
          patterns: {},
          ranges: { '#/properties/duration/anyOf': { auto: -1, min: 4, max: 12 } },
        },
        want: [problem('input.duration', 'range_or_auto', 'range_or_auto', { auto: -1, min: 4, max: 12 })],
      },
    ],
  ])('mapAjvErrors: %s', (_name, { given, want }) => {
    expect(mapAjvErrors(given.errors, given.patterns, given.ranges)).toEqual(want);
  });
});
