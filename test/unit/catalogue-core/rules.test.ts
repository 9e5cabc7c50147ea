import { describe, expect, it } from 'vitest';
import { checkRules, type CrossFieldRule } from '../../../catalogue-core/rules.js';

const when = { field: 'mode', equals: 'pro' } as const;

describe('cross-field rules', () => {
  const cases: [string, { given: { input: Record<string, unknown>; rules: CrossFieldRule[] }; want: unknown[] }][] = [
    [
      'at least one given: none is',
      {
        given: {
          input: { image_urls: [] },
          rules: [{ kind: 'atLeastOne', id: 'need-one', fields: ['image_url', 'image_urls'] }],
        },
        want: [
          {
            path: 'input',
            rule: 'need-one',
            message: {
              key: 'rule_at_least_one',
              params: { field: 'input', fields: 'input.image_url, input.image_urls' },
            },
          },
        ],
      },
    ],
    [
      'at least one given: one is',
      {
        given: {
          input: { image_url: 'x' },
          rules: [{ kind: 'atLeastOne', id: 'need-one', fields: ['image_url', 'image_urls'] }],
        },
        want: [],
      },
    ],
    [
      'too many items across lists',
      {
        given: {
          input: { a: [1, 2], b: [3] },
          rules: [{ kind: 'maxTotalItems', id: 'max-3', fields: ['a', 'b'], max: 2 }],
        },
        want: [
          {
            path: 'input',
            rule: 'max-3',
            message: { key: 'rule_max_total_items', params: { field: 'input', max: 2, fields: 'input.a, input.b' } },
          },
        ],
      },
    ],
    [
      'required when a field equals a value',
      {
        given: { input: { mode: 'pro' }, rules: [{ kind: 'requiredWhen', id: 'seed-pro', field: 'seed', when }] },
        want: [
          {
            path: 'input.seed',
            rule: 'seed-pro',
            message: {
              key: 'rule_required_when',
              params: {
                field: 'input.seed',
                condition: { key: 'condition_equals', params: { field: 'input.mode', value: 'pro' } },
              },
            },
          },
        ],
      },
    ],
    [
      'required when: the condition does not hold',
      {
        given: { input: { mode: 'std' }, rules: [{ kind: 'requiredWhen', id: 'seed-pro', field: 'seed', when }] },
        want: [],
      },
    ],
    [
      'forbidden when another field is given',
      {
        given: {
          input: { a: 1, b: 2 },
          rules: [{ kind: 'forbiddenWhen', id: 'a-or-b', field: 'a', when: { field: 'b', present: true } }],
        },
        want: [
          {
            path: 'input.a',
            rule: 'a-or-b',
            message: {
              key: 'rule_forbidden_when',
              params: { field: 'input.a', condition: { key: 'condition_present', params: { field: 'input.b' } } },
            },
          },
        ],
      },
    ],
    [
      'a value outside those allowed when the condition holds',
      {
        given: {
          input: { mode: 'pro', fps: 60 },
          rules: [{ kind: 'valueWhen', id: 'fps-pro', field: 'fps', values: [24, 30], when }],
        },
        want: [
          {
            path: 'input.fps',
            rule: 'fps-pro',
            message: {
              key: 'rule_value_when',
              params: {
                field: 'input.fps',
                values: '24, 30',
                condition: { key: 'condition_equals', params: { field: 'input.mode', value: 'pro' } },
              },
            },
          },
        ],
      },
    ],
    [
      'a sum that does not match its field',
      {
        given: {
          input: { shots: [{ seconds: 3 }, { seconds: 4 }], duration: 8 },
          rules: [{ kind: 'sumEquals', id: 'shots-sum', field: 'shots', property: 'seconds', equalsField: 'duration' }],
        },
        want: [
          {
            path: 'input.shots',
            rule: 'shots-sum',
            message: { key: 'rule_sum_equals', params: { field: 'input.shots', property: 'seconds', target: 8 } },
          },
        ],
      },
    ],
    [
      'a sum that matches',
      {
        given: {
          input: { shots: [{ seconds: 4 }, { seconds: 4 }], duration: 8 },
          rules: [{ kind: 'sumEquals', id: 'shots-sum', field: 'shots', property: 'seconds', equalsField: 'duration' }],
        },
        want: [],
      },
    ],
    [
      'every failing rule, in rule order',
      {
        given: {
          input: { mode: 'pro' },
          rules: [
            { kind: 'requiredWhen', id: 'second', field: 'seed', when },
            { kind: 'atLeastOne', id: 'first', fields: ['x'] },
          ],
        },
        want: [expect.objectContaining({ rule: 'second' }), expect.objectContaining({ rule: 'first' })],
      },
    ],
  ];

  it.each(cases)('%s', (_name, { given, want }) => {
    expect(checkRules(given.input, given.rules)).toEqual(want);
  });
});
