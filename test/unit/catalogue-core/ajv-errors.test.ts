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
        want: [
          { path: 'input.prompt', rule: 'required', message: { key: 'required', params: { field: 'input.prompt' } } },
        ],
      },
    ],
    [
      'an unknown field',
      {
        given: [error('additionalProperties', '', { additionalProperty: 'colour' })],
        want: [
          {
            path: 'input.colour',
            rule: 'unknown_field',
            message: { key: 'unknown_field', params: { field: 'input.colour' } },
          },
        ],
      },
    ],
    [
      'a wrong type',
      {
        given: [error('type', '/seed', { type: 'integer' })],
        want: [
          {
            path: 'input.seed',
            rule: 'type',
            message: { key: 'type', params: { type: 'integer', field: 'input.seed' } },
          },
        ],
      },
    ],
    [
      'a value outside an enum',
      {
        given: [error('enum', '/resolution', { allowedValues: ['720p', '1080p'] })],
        want: [
          {
            path: 'input.resolution',
            rule: 'enum',
            message: { key: 'enum', params: { values: '720p, 1080p', field: 'input.resolution' } },
          },
        ],
      },
    ],
    [
      'a const is an enum of one',
      {
        given: [error('const', '/mode', { allowedValue: 'std' })],
        want: [
          {
            path: 'input.mode',
            rule: 'enum',
            message: { key: 'enum', params: { values: 'std', field: 'input.mode' } },
          },
        ],
      },
    ],
    [
      'a limit',
      {
        given: [error('maxLength', '/prompt', { limit: 10 })],
        want: [
          {
            path: 'input.prompt',
            rule: 'maxLength',
            message: { key: 'max_length', params: { limit: 10, field: 'input.prompt' } },
          },
        ],
      },
    ],
    [
      'the same problem twice is listed once',
      {
        given: [error('minimum', '/n', { limit: 1 }), error('minimum', '/n', { limit: 1 })],
        want: [
          { path: 'input.n', rule: 'minimum', message: { key: 'minimum', params: { limit: 1, field: 'input.n' } } },
        ],
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
        want: [
          {
            path: 'input.image_url',
            rule: 'pattern',
            message: { key: 'reference_url', params: { field: 'input.image_url' } },
          },
        ],
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
        want: [
          {
            path: 'input.duration',
            rule: 'range_or_auto',
            message: { key: 'range_or_auto', params: { auto: -1, min: 4, max: 12, field: 'input.duration' } },
          },
        ],
      },
    ],
  ])('mapAjvErrors: %s', (_name, { given, want }) => {
    expect(mapAjvErrors(given.errors, given.patterns, given.ranges)).toEqual(want);
  });
});
