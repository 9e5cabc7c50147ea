import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Case, Want } from '../../../generator/plugins/vectors/emit.js';
import { vectorsPlugin } from '../../../generator/plugins/vectors/emit.js';
import { projectCatalogue } from '../../support/catalogue.js';
import { ROOT } from '../../support/root.js';

const catalogue = projectCatalogue();
const emit = async () => vectorsPlugin.emit({ catalogue, emitted: new Map() });
const files = await emit();
const vectors = (id: string): Case[] => {
  const file = files.find((f) => f.path === `vectors/${id}.json`);
  if (!file) throw new Error(`no vectors for ${id}`);
  return (JSON.parse(file.contents) as { cases: Case[] }).cases;
};
const reject = (path: string, rule: string): Want => ({ reject: { path, rule } });

describe('vectors plugin', () => {
  it('emits the same files twice', async () => {
    expect(await emit()).toEqual(files);
  });

  it('emits one file per model, named after it, without a header of its own', () => {
    expect(files.map((f) => f.path).sort()).toEqual(catalogue.models.map((m) => `vectors/${m.id}.json`).sort());
    for (const file of files) {
      const parsed = JSON.parse(file.contents) as Record<string, unknown>;
      expect(Object.keys(parsed)).toEqual(['model', 'cases']);
      expect(file.inputs).toEqual(catalogue.models.find((m) => m.id === parsed.model)!.sources);
    }
  });

  it('gives unique names within a model', () => {
    for (const model of catalogue.models) {
      const names = vectors(model.id).map((c) => c.name);
      expect(new Set(names).size).toBe(names.length);
    }
  });

  it('names no model in its code', () => {
    const dir = join(ROOT, 'generator/plugins/vectors');
    const source = readdirSync(dir)
      .map((f) => readFileSync(join(dir, f), 'utf8'))
      .join('\n');
    for (const model of catalogue.models) {
      for (const word of [model.id, model.vendor, model.family]) expect(source).not.toContain(word);
    }
  });

  const table: { model: string; name: string; want: Want; input?: Record<string, unknown> }[] = [
    {
      model: 'vendor_d/family_d/reference-to-video',
      name: 'rule duration-4-only-at-768p: violated (duration_seconds=4 with resolution=2k)',
      want: reject('input.resolution', 'duration-4-only-at-768p'),
      input: { duration_seconds: 4, resolution: '2k' },
    },
    {
      model: 'vendor_d/family_d/reference-to-video',
      name: 'rule duration-4-only-at-768p: duration_seconds=4 with resolution=768p accepted',
      want: 'accept',
      input: { duration_seconds: 4, resolution: '768p' },
    },
    { model: 'vendor_d/family_d/reference-to-video', name: 'duration_seconds=4 (min) accepted', want: 'accept' },
    {
      model: 'vendor_d/family_d/reference-to-video',
      name: 'duration_seconds=16 (max+1) rejected',
      want: reject('input.duration_seconds', 'maximum'),
      input: { duration_seconds: 16 },
    },
    {
      model: 'vendor_d/family_d/reference-to-video',
      name: 'enable_prompt_expansion=true (not a value) rejected',
      want: reject('input.enable_prompt_expansion', 'enum'),
      input: { enable_prompt_expansion: true },
    },
    {
      model: 'vendor_a/family_a-2.0-mini/reference-to-video',
      name: 'rule image-or-video-required: violated (none of reference_image_urls, reference_video_urls given)',
      want: reject('input', 'image-or-video-required'),
      input: { reference_image_urls: undefined, reference_video_urls: undefined },
    },
    {
      model: 'vendor_a/family_a-2.0-mini/reference-to-video',
      name: 'rule image-or-video-required: only reference_video_urls given accepted',
      want: 'accept',
      input: {
        reference_image_urls: undefined,
        reference_video_urls: ['https://example.com/reference_video_urls-1.mp4'],
      },
    },
    {
      model: 'vendor_a/family_a-2.0-mini/reference-to-video',
      name: 'duration_seconds=-1 (auto) accepted',
      want: 'accept',
      input: { duration_seconds: -1 },
    },
    {
      model: 'vendor_a/family_a-2.0-mini/reference-to-video',
      name: 'duration_seconds=16 (max+1) rejected',
      want: reject('input.duration_seconds', 'range_or_auto'),
    },
    {
      model: 'vendor_c/o3/reference-to-video',
      name: 'rule customize-needs-multi-prompt: violated (shot_type=customize without multi_prompt)',
      want: reject('input.multi_prompt', 'customize-needs-multi-prompt'),
      input: { shot_type: 'customize', multi_prompt: undefined },
    },
    {
      model: 'vendor_c/o3/reference-to-video',
      name: 'rule multi-prompt-only-with-customize: violated (shot_type=single with multi_prompt)',
      want: reject('input.multi_prompt', 'multi-prompt-only-with-customize'),
    },
    {
      model: 'vendor_c/o3/reference-to-video',
      name: 'rule multi-prompt-adds-up-to-duration: violated (multi_prompt duration_seconds adds up to 6, duration_seconds is 5)',
      want: reject('input.multi_prompt', 'multi-prompt-adds-up-to-duration'),
      input: { shot_type: 'customize', duration_seconds: 5 },
    },
    {
      model: 'vendor_c/o3/reference-to-video',
      name: 'shot_type=customize accepted',
      want: 'accept',
      input: {
        shot_type: 'customize',
        multi_prompt: [{ prompt: 'A red fox trots through fresh snow at dawn.', duration_seconds: 5 }],
      },
    },
    {
      model: 'vendor_c/o3/reference-to-video',
      name: 'elements[0].image_urls with 1 item (minItems-1) rejected',
      want: reject('input.elements[0].image_urls', 'minItems'),
    },
    {
      model: 'vendor_b/family_c-2.6/reference-to-video',
      name: 'rule at-most-5-references: 2 reference_image_urls + 3 reference_video_urls (5 in total) accepted',
      want: 'accept',
    },
    {
      model: 'vendor_b/family_c-2.6-flash/reference-to-video',
      name: 'rule at-most-5-references: violated (5 reference_image_urls + 1 reference_video_urls = 6 in total)',
      want: reject('input', 'at-most-5-references'),
    },
    {
      model: 'vendor_b/family_c-3.0/reference-to-video',
      name: 'duration_seconds=0 (min-1) rejected',
      want: reject('input.duration_seconds', 'range_or_auto'),
    },
    {
      model: 'vendor_b/family_c-3.0/reference-to-video',
      name: 'rule at-least-one-reference: only reference_link_url given accepted',
      want: 'accept',
      input: { reference_image_urls: undefined, reference_link_url: 'https://example.com/page' },
    },
    {
      model: 'vendor_d/family_d-lora/reference-to-video',
      name: 'loras[0].scale=4.5 (max+0.5) rejected',
      want: reject('input.loras[0].scale', 'maximum'),
      input: { loras: [{ path: 'https://example.com/lora-1.safetensors', scale: 4.5 }] },
    },
    {
      model: 'vendor_b/family_b-1.1/reference-to-video',
      name: 'reference_image_urls[0]=ftp://example.com/x (pattern) rejected',
      want: reject('input.reference_image_urls[0]', 'pattern'),
    },
  ];

  it.each(table)('$model: $name', ({ model, name, want, input }) => {
    const found = vectors(model).find((c) => c.name === name);
    expect(found, `no vector named "${name}"`).toBeDefined();
    expect(found!.want).toEqual(want);
    for (const [key, value] of Object.entries(input ?? {})) expect(found!.input[key], key).toEqual(value);
  });

  it('leaves out a total that the per-field limits cannot exceed (family_c-2.6: 2 + 3 = 5)', () => {
    const broken = vectors('vendor_b/family_c-2.6/reference-to-video').filter(
      (c) => c.want !== 'accept' && c.want.reject.rule === 'at-most-5-references',
    );
    expect(broken).toEqual([]);
  });
});
