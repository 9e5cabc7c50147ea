import { describe, expect, it } from 'vitest';
import type { ProviderMapping } from '../../../generated/provider-mappings.js';
import { inputMaps, mapField, mapInput, valueAt } from '../../../runtime/upstreams/map-input.js';

/** runtime/upstreams/map-input.ts: a task's input as a provider names it (spec/providers/<protocol>.yaml). */

/** A mapping with one rule of each kind the spec allows. */
const MAPPING: ProviderMapping = {
  protocol: 'jobs',
  fields: {
    prompt: { to: 'text_prompt' },
    image_url: { to: 'image.url' },
    image_strength: { to: 'image.strength', as: 'number' },
    duration_seconds: { to: 'duration', as: 'integer' },
    seed: { as: 'string' },
    watermark: { as: 'boolean' },
    resolution: { values: { '720p': 'hd', '1080p': 'full_hd', '4k': 2160 } },
    negative_prompt: { drop: true },
    camera_fixed: { unsupported: true },
  },
  otherFields: 'pass',
  set: { 'meta.source': 'mediaforge' },
  serves: 'subset',
  unmapped: { resolution: ['480p'] },
  unsupported: { camera_fixed: { default: false } },
};

describe('mapInput', () => {
  it.each([
    [
      'renamed, nested and converted fields, with what the mapping sets',
      {
        given: {
          prompt: 'a cat',
          image_url: 'https://e.example/a.png',
          image_strength: '0.5',
          duration_seconds: 5.7,
          seed: 42,
          watermark: 'true',
        },
        want: {
          ok: true,
          body: {
            text_prompt: 'a cat',
            image: { url: 'https://e.example/a.png', strength: 0.5 },
            duration: 5,
            seed: '42',
            watermark: true,
            meta: { source: 'mediaforge' },
          },
        },
      },
    ],
    [
      'a value replaced by the provider value, of any type',
      { given: { resolution: '4k' }, want: { ok: true, body: { resolution: 2160, meta: { source: 'mediaforge' } } } },
    ],
    [
      'a dropped field and an absent one, not sent',
      {
        given: { negative_prompt: 'blur', prompt: undefined },
        want: { ok: true, body: { meta: { source: 'mediaforge' } } },
      },
    ],
    [
      'a field the mapping does not name, passed as it is',
      { given: { style: { a: 1 } }, want: { ok: true, body: { style: { a: 1 }, meta: { source: 'mediaforge' } } } },
    ],
    [
      'an unsupported field at the model default, sent as nothing',
      { given: { camera_fixed: false }, want: { ok: true, body: { meta: { source: 'mediaforge' } } } },
    ],
    [
      'an unsupported field set otherwise: cannot go there',
      { given: { prompt: 'x', camera_fixed: true }, want: { ok: false, field: 'camera_fixed', value: true } },
    ],
    [
      'a value with no provider value: cannot go there',
      { given: { resolution: '480p' }, want: { ok: false, field: 'resolution', value: '480p' } },
    ],
    [
      'a value named like an inherited property, which is no provider value',
      { given: { resolution: 'toString' }, want: { ok: false, field: 'resolution', value: 'toString' } },
    ],
  ])('maps %s', (_name, { given, want }) => {
    expect(mapInput(MAPPING, given)).toEqual(want);
  });
});

describe('inputMaps', () => {
  it.each([
    ['every value mapped', { given: { resolution: '720p', prompt: 'x' }, want: true }],
    ['a value the provider lacks', { given: { resolution: '480p' }, want: false }],
    ['an unsupported field at its default', { given: { camera_fixed: false }, want: true }],
    ['an unsupported field otherwise', { given: { camera_fixed: true }, want: false }],
    ['the field absent', { given: {}, want: true }],
  ])('answers %s', (_name, { given, want }) => {
    expect(inputMaps(MAPPING, given)).toBe(want);
  });
});

describe('mapField', () => {
  it.each([
    ['absent', { given: { field: 'prompt', value: undefined }, want: undefined }],
    ['not in the mapping', { given: { field: 'style', value: 'noir' }, want: 'noir' }],
    ['converted', { given: { field: 'duration_seconds', value: '8' }, want: 8 }],
    ['replaced', { given: { field: 'resolution', value: '1080p' }, want: 'full_hd' }],
    ['with no provider value', { given: { field: 'resolution', value: '480p' }, want: undefined }],
    ['unsupported', { given: { field: 'camera_fixed', value: false }, want: undefined }],
    ['renamed only: the value as it is', { given: { field: 'prompt', value: 'a cat' }, want: 'a cat' }],
  ])('gives %s', (_name, { given, want }) => {
    expect(mapField(MAPPING, given.field, given.value)).toEqual(want);
  });
});

describe('valueAt', () => {
  const result = { video: { url: 'https://r.example/v.mp4' }, output: 'https://r.example/o.mp4', n: null };
  it.each([
    ['a nested path', { given: 'video.url', want: 'https://r.example/v.mp4' }],
    ['a top-level path', { given: 'output', want: 'https://r.example/o.mp4' }],
    ['a path through a string', { given: 'output.url', want: undefined }],
    ['a path through null', { given: 'n.url', want: undefined }],
    ['a missing path', { given: 'result.url', want: undefined }],
  ])('reads %s', (_name, { given, want }) => {
    expect(valueAt(result, given)).toBe(want);
  });
});
