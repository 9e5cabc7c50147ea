import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { catalogue } from '../../generated/catalogue.js';
import { loadCatalogue } from '../../generator/load/catalogue.js';
import { SpecError } from '../../generator/load/spec-error.js';
import { ROOT } from '../support/root.js';
import { NEW_MODELS, ofMode, REFERENCE_TO_VIDEO } from '../support/other-modes.js';
import { copySpec } from '../support/spec-copy.js';

const vectorsOf = (id: string) =>
  (
    JSON.parse(readFileSync(join(ROOT, 'generated/vectors', `${id}.json`), 'utf8')) as {
      cases: { name: string; input: Record<string, unknown>; want: unknown }[];
    }
  ).cases;
/** The model's accepted base input, from its generated vectors. */
const baseInput = (id: string) => structuredClone(vectorsOf(id).find((c) => c.name === 'base input accepted')!.input);
const model = (id: string) => catalogue.get(id)!;
const errorsOf = (id: string, input: Record<string, unknown>) => {
  const result = model(id).validate(input);
  return result.ok ? [] : result.errors.map((e) => ({ path: e.path, rule: e.rule }));
};
const validated = (id: string, input: Record<string, unknown>) => {
  const result = model(id).validate(input);
  if (!result.ok) throw new Error(`${id}: ${JSON.stringify(result.errors)}`);
  return result.value;
};

describe('the catalogue holds exactly the specification modes', () => {
  it('44 other modes plus the 17 reference-to-video models, and nothing else', () => {
    expect(NEW_MODELS).toHaveLength(44);
    expect(REFERENCE_TO_VIDEO).toHaveLength(17);
    expect([...catalogue.keys()].sort()).toEqual([...NEW_MODELS, ...REFERENCE_TO_VIDEO].sort());
  });

  it.each([
    'vendor_d/family_d-variant-lora/text-to-video',
    'vendor_e/q4-preview/text-to-video',
    'vendor_b/family_c-2.6-flash/text-to-video',
    'vendor_b/family_c-2.6/video-extend',
    'vendor_c/o3/video-extend',
    'vendor_a/family_a-2.0/video-edit',
    'vendor_a/family_a-2.0-mini/other-modes',
  ])('%s is not a model (a mode the table does not list, or an abstract base)', (id) => {
    expect(catalogue.has(id)).toBe(false);
  });
});

describe.each(NEW_MODELS.map((id) => [id]))('%s', (id) => {
  it('has a docs page with its assumptions, and vectors its validator passes', () => {
    const page = readFileSync(join(ROOT, 'generated/docs/models', `${id}.md`), 'utf8');
    const info = model(id).info;
    expect(info.assumptions.length).toBeGreaterThan(0);
    expect(page).toContain('## Assumptions');
    for (const a of info.assumptions) expect(page).toContain(a.reason.replace(/</g, '\\<'));
    expect(page).toContain(`- Mode: \`${info.mode}\`: ${info.modeDescription}`);
    const cases = vectorsOf(id);
    expect(cases.length).toBeGreaterThan(5);
    for (const c of cases) {
      const errors = errorsOf(id, structuredClone(c.input));
      if (c.want === 'accept') expect(errors, c.name).toEqual([]);
      else expect(errors, c.name).toContainEqual((c.want as { reject: unknown }).reject);
    }
  });

  it('is fully expanded: no reference arrays, and the fields of its mode', () => {
    const props = model(id).info.inputSchema.properties;
    for (const ref of [
      'reference_video_urls',
      'reference_audio_urls',
      'reference_file_url',
      'reference_link_url',
      'elements',
    ])
      expect(props[ref]).toBeUndefined();
    if (!id.endsWith('/video-edit')) expect(props.reference_image_urls).toBeUndefined();
    const required = model(id).info.inputSchema.required ?? [];
    if (id.endsWith('/text-to-video')) expect(required).toContain('prompt');
    if (id.endsWith('/image-to-video')) expect(required).toContain('image_url');
    if (id.endsWith('/video-extend') || id.endsWith('/video-edit')) expect(required).toContain('video_url');
  });
});

describe('image-to-video', () => {
  it.each(ofMode('image-to-video').map((id) => [id]))(
    '%s: last_image_url without image_url is rejected (image_url required)',
    (id) => {
      const input = baseInput(id);
      delete input.image_url;
      input.last_image_url = 'https://example.com/last.png';
      // image_url is required whatever else is sent: `required` is the complete reason (see the mode's decisions).
      expect(errorsOf(id, input)).toContainEqual({ path: 'input.image_url', rule: 'required' });
      expect(model(id).info.rules).toContainEqual({
        kind: 'requiredWhen',
        id: 'last-image-only-with-image',
        field: 'image_url',
        when: { field: 'last_image_url', present: true },
      });
      const vector = vectorsOf(id).find((c) =>
        c.name.startsWith('rule last-image-only-with-image: last_image_url given without image_url'),
      );
      expect(vector?.want).toEqual({ reject: { path: 'input.image_url', rule: 'required' } });
      expect(errorsOf(id, { ...baseInput(id), last_image_url: 'https://example.com/last.png' })).toEqual([]);
    },
  );

  it.each(ofMode('image-to-video').map((id) => [id]))('%s: aspect_ratio is rejected as an unknown field', (id) => {
    expect(errorsOf(id, { ...baseInput(id), aspect_ratio: '16:9' })).toEqual([
      { path: 'input.aspect_ratio', rule: 'unknown_field' },
    ]);
    expect(vectorsOf(id).some((c) => c.name.startsWith('aspect_ratio (not a field of image-to-video)'))).toBe(true);
  });

  it.each([...ofMode('video-extend'), ...ofMode('video-edit')].map((id) => [id]))(
    '%s: aspect_ratio is rejected too (the shape follows the clip)',
    (id) => {
      expect(errorsOf(id, { ...baseInput(id), aspect_ratio: '16:9' })).toEqual([
        { path: 'input.aspect_ratio', rule: 'unknown_field' },
      ]);
    },
  );
});

describe('rates of the other modes', () => {
  it.each([
    // family_a has no reference video in these modes: the with_video false rows.
    ['vendor_a/family_a-2.0-mini/text-to-video', { resolution: '480p' }, '3.69'],
    ['vendor_a/family_a-2.0-mini/image-to-video', { resolution: '720p' }, '7.94'],
    ['vendor_a/family_a-2.0-mini/video-extend', { resolution: '720p', enable_web_search: true }, '10.8'],
    ['vendor_a/family_a-2.0/text-to-video', { resolution: '4k' }, '116.7'],
    ['vendor_a/family_a-2.5/video-extend', { resolution: '1080p' }, '102.35'],
    ['vendor_b/family_c-3.0-pro-prime/video-extend', { resolution: '2k' }, '37.8'],
    ['vendor_b/family_c-2.6-flash/image-to-video', { resolution: '1080p', generate_audio: true }, '10.13'],
    ['vendor_c/o3/text-to-video', { resolution: '1080p', generate_audio: true }, '16.8'],
    ['vendor_c/o3/video-edit', { resolution: '720p' }, '15.12'],
    ['vendor_c/o3/video-edit', { resolution: '4k' }, '62.85'],
    ['vendor_d/family_d-variant-lora/video-extend', { resolution: '1080p' }, '40.5'],
    ['vendor_e/q4-preview/image-to-video', { resolution: '540p' }, '6.75'],
  ])('%s at %j: %s credits/s', (id, options, rate) => {
    const input = validated(id, { ...baseInput(id), ...options });
    expect(model(id).price(input).rate).toBe(rate);
  });

  it('a reference clip adds nothing on family_c-2.6 image-to-video (no reference clips there)', () => {
    const id = 'vendor_b/family_c-2.6/image-to-video';
    expect(model(id).price(validated(id, baseInput(id)))).toMatchObject({
      billableSeconds: 5,
      estimatedCredits: 49,
      maxCredits: 49,
    });
  });
});

describe('video-edit: the length follows the clip', () => {
  const id = 'vendor_c/o3/video-edit';
  it.each([
    // [resolution, clip seconds known at acceptance, credits]: rate x seconds, rounded up.
    ['720p', 7, 106], // 15.12 x 7 = 105.84
    ['1080p', 7, 142], // 20.16 x 7 = 141.12
    ['4k', 7, 440], // 62.85 x 7 = 439.95
    ['720p', 3, 46], // 15.12 x 3 = 45.36
    ['720p', 6.2, 106], // rounded up to 7 s
  ])(
    'an edit at %s of a known %f s clip is held and charged for its length: %i credits',
    (resolution, seconds, credits) => {
      const input = validated(id, { ...baseInput(id), resolution });
      const held = model(id).price(input, { sourceClipSeconds: seconds });
      expect(held).toMatchObject({
        billableSeconds: Math.ceil(seconds),
        estimatedCredits: credits,
        maxCredits: credits,
      });
      const settled = model(id).price(input, { sourceClipSeconds: seconds, outputSeconds: seconds });
      expect(settled.estimatedCredits).toBe(credits);
    },
  );

  it('an edit of a clip of unknown length is held at the assumed 15 s and settled at the measured length', () => {
    const input = validated(id, baseInput(id));
    expect(model(id).info.pricing.sourceClip).toEqual({
      field: 'video_url',
      output: 'clip-length',
      assumedSeconds: 15,
    });
    expect(model(id).price(input)).toMatchObject({ billableSeconds: 15, estimatedCredits: 227, maxCredits: 227 }); // 15.12 x 15 = 226.8
    expect(model(id).price(input, { outputSeconds: 7 })).toMatchObject({ billableSeconds: 7, estimatedCredits: 106 });
  });

  it('has neither duration_seconds nor generate_audio, and takes up to 4 optional images', () => {
    const props = model(id).info.inputSchema.properties;
    expect(props.duration_seconds).toBeUndefined();
    expect(props.generate_audio).toBeUndefined();
    expect(props.keep_original_audio).toBeUndefined();
    expect(props.reference_image_urls).toMatchObject({ maxItems: 4 });
    expect(model(id).info.inputSchema.required).toEqual(['prompt', 'video_url']);
    const five = Array.from({ length: 5 }, (_, i) => `https://example.com/${i}.png`);
    expect(errorsOf(id, { ...baseInput(id), reference_image_urls: five })).toEqual([
      { path: 'input.reference_image_urls', rule: 'maxItems' },
    ]);
    expect(errorsOf(id, { ...baseInput(id), duration_seconds: 5 })).toEqual([
      { path: 'input.duration_seconds', rule: 'unknown_field' },
    ]);
    expect(errorsOf(id, { ...baseInput(id), generate_audio: true })).toEqual([
      { path: 'input.generate_audio', rule: 'unknown_field' },
    ]);
  });
});

describe('video-extend: only the new segment is billed', () => {
  it.each(ofMode('video-extend').map((id) => [id]))('%s: the clip adds nothing to the price, known or not', (id) => {
    const input = validated(id, { ...baseInput(id), duration_seconds: 5 });
    const base = model(id).price(input);
    expect(base.billableSeconds).toBe(5);
    expect(model(id).price(input, { sourceClipSeconds: 12 })).toEqual(base);
    // Settled: the joined file (12 s clip + 5 s) minus the clip.
    expect(model(id).price(input, { sourceClipSeconds: 12, outputSeconds: 17 })).toMatchObject({
      billableSeconds: 5,
      estimatedCredits: base.estimatedCredits,
    });
    expect(model(id).info.pricing.sourceClip).toMatchObject({
      field: 'video_url',
      output: 'joined',
      billSourceSeconds: false,
    });
  });

  it('family_d video-extend: 5 s at 768p is 28 credits; a 7 s clip and a 12 s output settle at the 5 new seconds', () => {
    const id = 'vendor_d/family_d/video-extend';
    const input = validated(id, { prompt: 'the fox turns', video_url: 'task_abcdefghijklmnop' });
    expect(model(id).price(input, { sourceClipSeconds: 7 })).toMatchObject({
      billableSeconds: 5,
      estimatedCredits: 28,
      maxCredits: 28,
    });
    expect(model(id).price(input, { sourceClipSeconds: 7, outputSeconds: 12 })).toMatchObject({
      billableSeconds: 5,
      estimatedCredits: 28,
    });
  });

  it('family_a 2.0 mini video-extend with -1: held at 15 s, settled at the measured new segment', () => {
    const id = 'vendor_a/family_a-2.0-mini/video-extend';
    const input = validated(id, { prompt: 'on', video_url: 'https://example.com/clip.mp4', duration_seconds: -1 });
    expect(model(id).price(input)).toMatchObject({ estimatedCredits: 40, maxCredits: 120 }); // 7.94 x 5, 7.94 x 15
    expect(model(id).price(input, { sourceClipSeconds: 7, outputSeconds: 16 })).toMatchObject({
      billableSeconds: 9,
      estimatedCredits: 72,
    }); // 7.94 x 9 = 71.46
  });

  it.each([
    ['task_abcdefghijklmnop', true],
    ['https://example.com/clip.mp4', true],
    ['service://a/asset_123', true],
    ['ftp://example.com/clip.mp4', false],
    ['task_', false],
    ['job_abcdefgh', false],
  ])('video_url %s accepted: %s', (value, ok) => {
    const id = 'vendor_e/q4-preview/video-extend';
    const errors = errorsOf(id, { ...baseInput(id), video_url: value });
    expect(errors).toEqual(ok ? [] : [{ path: 'input.video_url', rule: 'pattern' }]);
  });
});

describe('the vocabulary guards the modes', () => {
  let copy: ReturnType<typeof copySpec> | undefined;
  afterEach(() => copy?.remove());
  const broken = (file: string, edit: (text: string) => string): string => {
    copy = copySpec();
    const path = join(copy.root, 'spec/models', file);
    expect(existsSync(path)).toBe(true);
    writeFileSync(path, edit(readFileSync(path, 'utf8')));
    try {
      loadCatalogue(copy.root);
    } catch (error) {
      expect(error).toBeInstanceOf(SpecError);
      return (error as Error).message;
    }
    throw new Error('generation did not fail');
  };

  it.each([
    [
      'an image-to-video model with aspect_ratio',
      'vendor_d/family_d/image-to-video.yaml',
      (t: string) => t.replace('  aspect_ratio: null\n', ''),
      /a image-to-video model has no "aspect_ratio" field/,
    ],
    [
      'a video-extend model without pricing.sourceClip',
      'vendor_d/family_d/video-extend.yaml',
      (t: string) => t.replace(/pricing:\n  sourceClip: .*\n/, ''),
      /video_url holds a source clip: the model needs pricing.sourceClip/,
    ],
    [
      'a video-extend model billing the clip',
      'vendor_d/family_d/video-extend.yaml',
      (t: string) => t.replace('billSourceSeconds: false', 'billSourceSeconds: true'),
      /declares pricing.sourceClip.billSourceSeconds: false/,
    ],
    [
      'a video-edit model with duration_seconds',
      'vendor_c/o3/video-edit.yaml',
      (t: string) => t.replace('  duration_seconds: null\n', ''),
      /has no "duration_seconds" field/,
    ],
    [
      'a base that forgets a reference array',
      'vendor_d/family_d/other-modes.yaml',
      (t: string) => t.replace('  reference_audio_urls: null\n', ''),
      /text-to-video model has no "reference_audio_urls" field/,
    ],
    [
      'a fixed option with a value it does not have',
      'vendor_c/o3/other-modes.yaml',
      (t: string) => t.replace('with_video: false', 'with_video: maybe'),
      /fixedOptions\/with_video must be boolean,null/,
    ],
  ])('%s fails generation with file:line', (_name, file, edit, want) => {
    const message = broken(file, edit);
    expect(message).toMatch(want);
    expect(message).toMatch(/^spec\/[^:\n]+\.yaml:\d+:\d+: /m);
  });

  it('a rules map removes one inherited rule and adds one; the others stay', () => {
    const rules = model('vendor_d/family_d/image-to-video').info.rules.map((r) => r.id);
    expect(rules).toEqual(['duration-4-only-at-768p', 'last-image-only-with-image']);
    expect(model('vendor_a/family_a-2.0-mini/image-to-video').info.rules.map((r) => r.id)).toEqual([
      'last-image-only-with-image',
    ]);
    expect(model('vendor_c/o3/text-to-video').info.rules.map((r) => r.id)).toEqual(
      model('vendor_c/o3/reference-to-video').info.rules.map((r) => r.id),
    );
  });
});
