import { describe, expect, it } from 'vitest';
import { checkMarkers, countReferences, markerStyles } from '../../../generated/markers.js';
import { projectCatalogue } from '../../support/catalogue.js';

const spec = projectCatalogue();
const IMG = 'https://example.com/a.png';

describe('markers plugin (generated/markers.ts)', () => {
  it('has one checker per marker style a model uses, with the spec patterns as global regular expressions', () => {
    const used = new Map(spec.models.map((m) => [m.markers.name, m.markers]));
    expect([...markerStyles.keys()]).toEqual([...used.keys()].sort());
    for (const [name, style] of used) {
      const code = markerStyles.get(name)!;
      expect(code.example).toBe(style.example);
      expect(code.patterns.map((p) => [p.re.source, p.re.flags])).toEqual(
        style.patterns.map((p) => [new RegExp(p.regex).source, `g${p.ignoreCase ? 'i' : ''}`]),
      );
    }
  });

  it('warns about a marker naming a reference the request does not carry, and not about one it carries', () => {
    const fields = [['reference_image_urls', 'image']] as const;
    expect(checkMarkers('at-numbered', { prompt: '@Image1 and @Image2', reference_image_urls: [IMG] }, fields)).toEqual(
      [
        {
          code: 'marker_unmatched',
          path: 'input.prompt',
          message: { key: 'marker_unmatched', params: { marker: '@Image2', count: 1, kind: 'image' } },
        },
      ],
    );
    expect(checkMarkers('at-numbered', { prompt: '@Image1' }, fields)).toEqual([
      {
        code: 'marker_kind_missing',
        path: 'input.prompt',
        message: { key: 'marker_kind_missing', params: { marker: '@Image1', kind: 'image' } },
      },
    ]);
    expect(checkMarkers('at-numbered', { prompt: '@Image1', reference_image_urls: [IMG] }, fields)).toEqual([]);
    expect(checkMarkers('no-such-style', { prompt: '@Image9' }, fields)).toEqual([]);
  });

  it('counts references per kind, and `any` over the kinds of the style order (all when it names none)', () => {
    const fields = [
      ['reference_image_urls', 'image'],
      ['reference_video_urls', 'video'],
      ['image_url', 'image'],
    ] as const;
    const input = { reference_image_urls: [IMG, IMG], reference_video_urls: [], image_url: IMG };
    expect(countReferences(input, fields, [])).toEqual({ image: 3, video: 0, any: 3 });
    expect(countReferences({ ...input, reference_video_urls: [IMG] }, fields, ['video'])).toEqual({
      image: 3,
      video: 1,
      any: 1,
    });
  });
});
