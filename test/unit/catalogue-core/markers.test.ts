import { describe, expect, it } from 'vitest';
import { checkMarkerPatterns, type MarkerPatternCode } from '../../../catalogue-core/markers.js';

const AT_IMAGE: MarkerPatternCode = { re: /@Image(\d+)/g, kind: 'image' };
const PICTURE: MarkerPatternCode = {
  re: /\b(first|second|third) (picture|clip)\b/gi,
  ordinal: true,
  kindWords: { picture: 'image', clip: 'video' },
};
const ANY: MarkerPatternCode = { re: /<<<ref_(\d+)>>>/g };

/** A finding on the prompt: its code is also its message's key. */
const promptWarning = (code: string, params: Record<string, unknown>) => ({
  code,
  path: 'input.prompt',
  message: { key: code, params },
});

describe('prompt markers', () => {
  it.each([
    [
      'a marker within the references',
      { given: { prompt: '@Image1 in the sky', patterns: [AT_IMAGE], counts: { image: 1 } }, want: [] },
    ],
    [
      'a marker past the references',
      {
        given: { prompt: '@Image1 and @Image3', patterns: [AT_IMAGE], counts: { image: 2 } },
        want: [promptWarning('marker_unmatched', { marker: '@Image3', count: 2, kind: 'image' })],
      },
    ],
    [
      'a marker of a kind not supplied',
      {
        given: { prompt: 'the second clip', patterns: [PICTURE], counts: { image: 2 } },
        want: [promptWarning('marker_kind_missing', { marker: 'second clip', kind: 'video' })],
      },
    ],
    [
      'a marker of any kind counts every reference',
      {
        given: { prompt: '<<<ref_2>>> then <<<ref_2>>>', patterns: [ANY], counts: { any: 1 } },
        want: [promptWarning('marker_unmatched', { marker: '<<<ref_2>>>', count: 1, kind: 'reference' })],
      },
    ],
    ['a prompt that is not text', { given: { prompt: 42, patterns: [AT_IMAGE], counts: {} }, want: [] }],
  ])('%s', (_name, { given, want }) => {
    expect(checkMarkerPatterns(given.prompt, given.patterns, given.counts)).toEqual(want);
  });
});
