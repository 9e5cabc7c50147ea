import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate } from '../../generator/generate.js';
import { catalogue as projectModels } from '../../generated/catalogue.js';
import { copySpec } from '../support/spec-copy.js';

/** A model a maintainer adds: one YAML file, nothing else. */
const NEW_MODEL = `id: vendor_f/zeta-1.0/text-to-video
title: zeta 1.0, text to video
summary: A model added in a test by writing one file.
markers: positional
fields:
  prompt: { required: true, maxLength: 800 }
  duration_seconds: { min: 2, max: 12, default: 4 }
  resolution: { values: [540p, 1080p], default: 540p }
  generate_audio: { default: false }
  seed: {}
rules:
  - kind: valueWhen
    id: audio-only-at-1080p
    field: resolution
    values: [1080p]
    when: { field: generate_audio, equals: true }
pricing:
  rates:
    - { resolution: 540p, rate: "2.25" }
    - { resolution: 1080p, rate: "7.1" }
`;

/**
 * A reference-to-video model: its reference images are required, and DashScope's and MiniMax's
 * profiles take none (issue 37): it is added by its file alone all the same. The generator derives
 * that those profiles (and those without a submit path for the mode) do not serve it.
 */
const REFERENCE_MODEL_ID = 'vendor_f/zeta-1.0/reference-to-video';
const REFERENCE_MODEL = `id: ${REFERENCE_MODEL_ID}
title: zeta 1.0, reference to video
summary: A reference-to-video model added in a test by writing one file.
markers: positional
fields:
  prompt: { required: true, maxLength: 800 }
  aspect_ratio: { values: [adaptive, "16:9", "9:16"], default: adaptive }
  duration_seconds: { min: 2, max: 12, default: 4 }
  resolution: { values: [540p, 1080p], default: 540p }
  reference_image_urls: { required: true, minItems: 1, maxItems: 4 }
pricing:
  rates:
    - { resolution: 540p, rate: "3" }
    - { resolution: 1080p, rate: "8" }
`;

describe('adding a model is adding one YAML file', () => {
  let copy: ReturnType<typeof copySpec>;
  let catalogue: Map<string, any>;
  let vectors: { cases: { input: unknown; want: unknown }[] };

  beforeAll(async () => {
    copy = copySpec();
    mkdirSync(join(copy.root, 'spec/models/vendor_f/zeta-1.0'), { recursive: true });
    writeFileSync(join(copy.root, 'spec/models/vendor_f/zeta-1.0/text-to-video.yaml'), NEW_MODEL);
    writeFileSync(join(copy.root, 'spec/models/vendor_f/zeta-1.0/reference-to-video.yaml'), REFERENCE_MODEL);
    const result = await generate(copy.root);
    expect(result.written.length).toBeGreaterThan(0);
    catalogue = (await import(join(copy.root, 'generated/catalogue.ts'))).catalogue;
    vectors = (
      await import(join(copy.root, 'generated/vectors/vendor_f/zeta-1.0/text-to-video.json'), {
        with: { type: 'json' },
      })
    ).default;
  }, 120_000);
  afterAll(() => copy.remove());

  it('is in the catalogue next to the others', () => {
    expect(catalogue.has('vendor_f/zeta-1.0/text-to-video')).toBe(true);
    expect(catalogue.has(REFERENCE_MODEL_ID)).toBe(true);
    expect(catalogue.size).toBe(projectModels.size + 2);
  });

  it('a reference-to-video model the dashscope and minimax profiles cannot serve: derived, not listed in spec/providers', async () => {
    const mappings = await import(join(copy.root, 'generated/provider-mappings.ts'));
    const required = { field: 'reference_image_urls' };
    expect(mappings.notServedBy('dashscope', REFERENCE_MODEL_ID)).toEqual(required);
    expect(mappings.notServedBy('minimax', REFERENCE_MODEL_ID)).toEqual(required);
    expect(mappings.providerMapping('dashscope', REFERENCE_MODEL_ID)).toBeUndefined();
    // Runway has no submit path for the mode; Ark takes reference images, so it serves the model.
    expect(mappings.notServedBy('runway', REFERENCE_MODEL_ID)).toEqual({ mode: 'reference-to-video' });
    expect(mappings.providerMapping('ark', REFERENCE_MODEL_ID)).toBeDefined();
    expect(mappings.providerMapping('jobs', REFERENCE_MODEL_ID)).toMatchObject({ serves: 'all' });
    // The generated page of what each protocol serves names it, and why.
    const page = readFileSync(join(copy.root, 'generated/docs/providers.md'), 'utf8');
    expect(page).toContain(
      `| \`${REFERENCE_MODEL_ID}\` | it requires reference_image_urls, which \`spec/providers/dashscope.yaml\` does not take (unsupported) |`,
    );
  });

  it("gets its Python TypedDict and its typed overloads in the Python client's generated half", () => {
    const python = join(copy.root, 'clients/python/src/mediaforge/_generated');
    const models = readFileSync(join(python, 'models.py'), 'utf8');
    expect(models).toContain('class VendorFZeta10TextToVideoInput(TypedDict, total=False):');
    expect(models).toContain('    resolution: Literal["540p", "1080p"]');
    expect(models).toContain('"vendor_f/zeta-1.0/text-to-video"');
    const tasks = readFileSync(join(python, 'tasks.py'), 'utf8');
    expect(tasks).toContain(
      'def create(self, *, model: Literal["vendor_f/zeta-1.0/text-to-video"], input: m.VendorFZeta10TextToVideoInput,',
    );
  });

  it('prices it: 7.1 credits/s for 12 s at 1080p is 86 credits; the 5-second minimum is 12', () => {
    const model = catalogue.get('vendor_f/zeta-1.0/text-to-video');
    const ok = model.validate({ prompt: 'a red kite over the sea', resolution: '1080p', duration_seconds: 12 });
    expect(ok.ok).toBe(true);
    expect(model.price(ok.value)).toMatchObject({
      rate: '7.1',
      billableSeconds: 12,
      estimatedCredits: 86,
      maxCredits: 86,
    });
    expect(model.info.pricing.minimumFor5sCredits).toBe(12);
  });

  it('validates it, cross-field rule included', () => {
    const model = catalogue.get('vendor_f/zeta-1.0/text-to-video');
    const bad = model.validate({ prompt: 'x', generate_audio: true });
    expect(bad).toMatchObject({ ok: false, errors: [{ path: 'input.resolution', rule: 'audio-only-at-1080p' }] });
    expect(model.validate({ prompt: 'x', duration_seconds: 13 })).toMatchObject({
      ok: false,
      errors: [{ path: 'input.duration_seconds', rule: 'maximum' }],
    });
    expect(model.validate({ prompt: 'x', aspect_ratio: '16:9' })).toMatchObject({
      ok: false,
      errors: [{ path: 'input.aspect_ratio', rule: 'unknown_field' }],
    });
  });

  it('gets its boundary vectors, and they hold against its validator', () => {
    const model = catalogue.get('vendor_f/zeta-1.0/text-to-video');
    expect(vectors.cases.length).toBeGreaterThan(15);
    for (const c of vectors.cases) {
      const result = model.validate(c.input);
      if (c.want === 'accept') expect(result.ok).toBe(true);
      else {
        const want = (c.want as { reject: { path: string; rule: string } }).reject;
        expect(result.ok).toBe(false);
        expect(result.errors).toEqual(expect.arrayContaining([expect.objectContaining(want)]));
      }
    }
  });
});
