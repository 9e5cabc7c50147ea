import { describe, expect, it } from 'vitest';
import { fillPath, fillTemplate, namedInputFields } from '../../../runtime/upstreams/profile-template.js';

/** runtime/upstreams/profile-template.ts: a provider profile's placeholders filled for one request. */

const NAMES: Record<string, unknown> = {
  model: 'gen-4',
  deadlineSeconds: 600,
  input: { prompt: 'a cat', seed: 7 },
  'input.prompt': 'a cat',
  'input.image_url': 'https://e.example/a.png',
  'input.references': ['https://e.example/1.png', 'https://e.example/2.png'],
  'input.nothing': undefined,
  zero: 0,
  nothing: null,
  jobId: 'job/1 ?',
  submitPath: '/v1/image_to_video',
};
const names = (name: string) => NAMES[name];

describe('fillTemplate', () => {
  it.each([
    ['one placeholder keeps its type (a number)', { given: '{deadlineSeconds}', want: 600 }],
    ['one placeholder keeps its type (an object)', { given: '{input}', want: { prompt: 'a cat', seed: 7 } }],
    ['a placeholder inside text is text', { given: 'seconds: {deadlineSeconds}', want: 'seconds: 600' }],
    ['an object inside text is its JSON', { given: 'in={input}', want: 'in={"prompt":"a cat","seed":7}' }],
    ['zero is a value', { given: { n: '{zero}' }, want: { n: 0 } }],
    [
      'a value that is only a null placeholder is absent (as in a path)',
      { given: { model: '{model}', n: '{nothing}' }, want: { model: 'gen-4' } },
    ],
    [
      'an absent member is left out, the others kept',
      { given: { model: '{model}', image: '{input.nothing}', fixed: 1 }, want: { model: 'gen-4', fixed: 1 } },
    ],
    ['text holding an absent placeholder is left out', { given: { t: 'x {input.nothing}' }, want: undefined }],
    [
      'an object whose every placeholder is absent is left out',
      {
        given: { model: '{model}', image: { url: '{input.nothing}', kind: 'first_frame' } },
        want: { model: 'gen-4' },
      },
    ],
    [
      'and so, recursively, is the object holding it when that was its only placeholder',
      { given: { a: 1, image: { url: '{input.nothing}', kind: 'first_frame' } }, want: undefined },
    ],
    [
      'an item of an array whose placeholder is absent is left out',
      {
        given: [
          { type: 'text', text: '{input.prompt}' },
          { type: 'image', url: '{input.nothing}' },
        ],
        want: [{ type: 'text', text: 'a cat' }],
      },
    ],
    ['an array whose every item was absent is absent', { given: { list: ['{input.nothing}'] }, want: undefined }],
    ['an array of constants stays', { given: { list: ['a', 1] }, want: { list: ['a', 1] } }],
    [
      'each: one item per element',
      {
        given: { refs: { each: '{input.references}', item: { uri: '{item}', role: 'reference' } } },
        want: {
          refs: [
            { uri: 'https://e.example/1.png', role: 'reference' },
            { uri: 'https://e.example/2.png', role: 'reference' },
          ],
        },
      },
    ],
    [
      'each over one value: one item',
      { given: [{ each: '{input.image_url}', item: '{item}' }], want: ['https://e.example/a.png'] },
    ],
    ['each over nothing: absent', { given: { refs: { each: '{input.nothing}', item: '{item}' } }, want: undefined }],
    ['a template without placeholders, as it is', { given: { a: [1, { b: true }] }, want: { a: [1, { b: true }] } }],
    ['nothing present at all', { given: '{input.nothing}', want: undefined }],
  ])('fills %s', (_name, { given, want }) => {
    expect(fillTemplate(given, names)).toEqual(want);
  });
});

describe('fillPath', () => {
  it.each([
    ['a value URL-encoded', { given: '/v1/tasks/{jobId}', want: '/v1/tasks/job%2F1%20%3F' }],
    ['submitPath as it is', { given: '{submitPath}/status', want: '/v1/image_to_video/status' }],
    ['a number', { given: '/wait/{deadlineSeconds}', want: '/wait/600' }],
    ['an absent value: not this path', { given: '/v1/tasks/{input.nothing}', want: undefined }],
    ['null: not this path', { given: '/v1/tasks/{nothing}', want: undefined }],
    ['no placeholder', { given: '/v1/health', want: '/v1/health' }],
  ])('fills %s', (_name, { given, want }) => {
    expect(fillPath(given, names)).toBe(want);
  });
});

describe('namedInputFields', () => {
  it.each([
    [
      'fields named anywhere, once each',
      {
        given: { a: '{input.prompt}', b: ['x {input.seed}', { c: '{input.prompt}' }], d: '{model}' },
        want: ['prompt', 'seed'],
      },
    ],
    ['the whole input is no field', { given: { input: '{input}' }, want: [] }],
    ['a template without placeholders', { given: 7, want: [] }],
  ])('lists %s', (_name, { given, want }) => {
    expect(namedInputFields(given)).toEqual(want);
  });
});
