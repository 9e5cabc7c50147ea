import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { catalogue } from '../../../generated/catalogue.js';
import { providerMapping, PROVIDER_PROTOCOLS } from '../../../generated/provider-mappings.js';
import { loadCatalogue } from '../../../generator/load/catalogue.js';
import { providerMappingsPlugin } from '../../../generator/plugins/provider-mappings/emit.js';
import { inputMaps, mapInput } from '../../../runtime/upstreams/map-input.js';
import { copySpec, loadError } from '../../support/spec-copy.js';

const MODEL_D = 'vendor_d/family_d/reference-to-video';
const MINI = 'vendor_a/family_a-2.0-mini/reference-to-video';
const head = (protocol: string) => `protocol: ${protocol}\nsummary: A test protocol.\n`;

/** One broken mapping file per row (written as spec/providers/<file>), and the file:line:col message it must produce. */
const BROKEN: [string, { file: string; text: string; want: RegExp }][] = [
  [
    'an unknown protocol',
    {
      file: 'grpc.yaml',
      text: head('grpc'),
      want: /spec\/providers\/grpc\.yaml:1:1: protocol must be one of openai-videos, jobs, fal-queue, replicate/,
    },
  ],
  [
    'a file named after another protocol',
    {
      file: 'replicate.yaml',
      text: head('fal-queue'),
      want: /spec\/providers\/replicate\.yaml:1:1: the file of protocol fal-queue must be named fal-queue\.yaml/,
    },
  ],
  [
    'a field the dictionary does not have',
    {
      file: 'fal-queue.yaml',
      text: `${head('fal-queue')}fields:\n  promt: text\n`,
      want: /fal-queue\.yaml:4:3: unknown field "promt": it is not in spec\/shared\/fields\.yaml/,
    },
  ],
  [
    'a text field sent as a number',
    {
      file: 'fal-queue.yaml',
      text: `${head('fal-queue')}fields:\n  prompt: { to: text, as: number }\n`,
      want: /fal-queue\.yaml:4:\d+: field "prompt" of model \S+ \(string\) cannot be sent as number/,
    },
  ],
  [
    'a model marked serves: all with a value that has no provider value',
    {
      file: 'fal-queue.yaml',
      text: `${head('fal-queue')}fields:\n  aspect_ratio: { values: { "16:9": landscape, "9:16": portrait, "1:1": square } }\nmodels:\n  ${MODEL_D}: { serves: all }\n`,
      want: /fal-queue\.yaml:4:\d+: model vendor_d\/family_d\/reference-to-video accepts aspect_ratio "[^"]+".*which this mapping has no value for: map them, or leave out serves: all/,
    },
  ],
  [
    'two fields sent under one name',
    {
      file: 'fal-queue.yaml',
      text: `${head('fal-queue')}fields:\n  negative_prompt: prompt\n`,
      want: /fields "(prompt|negative_prompt)" and "(prompt|negative_prompt)" of model \S+ would both be sent as "prompt"/,
    },
  ],
  [
    'every field declared, one left out',
    {
      file: 'fal-queue.yaml',
      text: `${head('fal-queue')}otherFields: declared\nfields:\n  prompt: prompt\n`,
      want: /fal-queue\.yaml:3:1: model \S+ has field "\w+", which this mapping does not name \(otherFields: declared\): map it or drop it/,
    },
  ],
  [
    'references neither stored nor original',
    {
      file: 'fal-queue.yaml',
      text: `${head('fal-queue')}references: fetched\n`,
      want: /fal-queue\.yaml:3:\d+: references must be stored \(the provider is sent signed links/,
    },
  ],
  [
    'a required field dropped',
    {
      file: 'fal-queue.yaml',
      text: `${head('fal-queue')}fields:\n  prompt: { drop: true }\n`,
      want: /fal-queue\.yaml:4:3: field "prompt" is required on model \S+: it cannot be dropped/,
    },
  ],
  [
    'a model listed that the protocol cannot run anyway (a required field unsupported)',
    {
      file: 'fal-queue.yaml',
      text: `${head('fal-queue')}fields:\n  video_url: { unsupported: true }\nmodels:\n  vendor_d/family_d/video-extend: { serves: none }\n`,
      want: /fal-queue\.yaml:6:3: model vendor_d\/family_d\/video-extend is not served by this protocol anyway \(it requires video_url, which this file does not take \(unsupported\)\): leave it out of models/,
    },
  ],
  [
    'an unsupported field with a name to send it under',
    {
      file: 'fal-queue.yaml',
      text: `${head('fal-queue')}fields:\n  watermark: { unsupported: true, to: wm }\n`,
      want: /fal-queue\.yaml:4:\d+: an unsupported field takes no other key/,
    },
  ],
  [
    'a model id the catalogue does not have',
    {
      file: 'fal-queue.yaml',
      text: `${head('fal-queue')}models:\n  vendor_x/nope-1.0/text-to-video: {}\n`,
      want: /fal-queue\.yaml:4:3: unknown model "vendor_x\/nope-1\.0\/text-to-video": not a callable model of spec\/models/,
    },
  ],
  [
    'a mapped value no model accepts',
    {
      file: 'fal-queue.yaml',
      text: `${head('fal-queue')}models:\n  ${MODEL_D}:\n    fields: { resolution: { values: { 768p: "768", 2k: "2048", 8k: "8192" } } }\n`,
      want: /fal-queue\.yaml:5:\d+: model vendor_d\/family_d\/reference-to-video does not accept resolution "8k"/,
    },
  ],
];

describe('provider mappings (spec/providers)', () => {
  let copy: ReturnType<typeof copySpec> | undefined;
  afterEach(() => copy?.remove());

  it.each(BROKEN)('refuses %s with file:line:col', (_name, { file, text, want }) => {
    copy = copySpec();
    writeFileSync(join(copy.root, 'spec/providers', file), text);
    expect(loadError(copy.root).message).toMatch(want);
  });

  it.each([
    ['a file that says references: original', { text: 'references: original\n', want: 'original' }],
    ['a file that says nothing of references', { text: '', want: 'stored' }],
  ] as const)('%s: its upstreams are sent %s references (referenceLinksOf)', async (_name, { text, want }) => {
    copy = copySpec();
    writeFileSync(join(copy.root, 'spec/providers/fal-queue.yaml'), `${head('fal-queue')}${text}`);
    const loaded = loadCatalogue(copy.root);
    expect(loaded.providers.find((p) => p.protocol === 'fal-queue')!.references).toBe(want);
    const [file] = await providerMappingsPlugin.emit({ catalogue: loaded, emitted: new Map() });
    // The emitted module's table keeps the word only where it is not the default.
    expect(file.contents.includes('"references": "original"') || file.contents.includes("references: 'original'")).toBe(
      want === 'original',
    );
  });

  it('a model marked serves: subset loads, and its values without a provider value are emitted as unmapped', async () => {
    copy = copySpec();
    writeFileSync(
      join(copy.root, 'spec/providers/fal-queue.yaml'),
      `${head('fal-queue')}fields:\n  prompt: prompt\nmodels:\n  ${MODEL_D}:\n    fields: { resolution: { values: { 768p: "768" } } }\n    serves: subset\n  ${MINI}: { serves: none }\n`,
    );
    const loaded = loadCatalogue(copy.root);
    const [file] = await providerMappingsPlugin.emit({ catalogue: loaded, emitted: new Map() });
    expect(file.path).toBe('provider-mappings.ts');
    expect(file.inputs).toContain('spec/providers/fal-queue.yaml');
    const table = loaded.providers.find((p) => p.protocol === 'fal-queue')!;
    expect(table.unmapped).toEqual({ [MODEL_D]: { resolution: ['2k'] } });
    expect(table.models[MINI].serves).toBe('none');
  });

  it('a required field unsupported: the models that require it are not served, derived, and nothing else needs saying', async () => {
    copy = copySpec();
    writeFileSync(
      join(copy.root, 'spec/providers/fal-queue.yaml'),
      `${head('fal-queue')}fields:\n  video_url: { unsupported: true }\n  aspect_ratio: { values: { "16:9": landscape } }\n`,
    );
    const table = loadCatalogue(copy.root).providers.find((p) => p.protocol === 'fal-queue')!;
    expect(table.notServed['vendor_d/family_d/video-extend']).toEqual({ field: 'video_url' });
    expect(table.notServed[MODEL_D]).toBeUndefined();
    // Values without a provider value serve the model in part without a serves: subset.
    expect(table.unmapped[MODEL_D]?.aspect_ratio).toContain('9:16');
  });

  it('an unsupported field serves the model in part: its default is emitted as the one value sent (as nothing), no serves: subset needed', async () => {
    copy = copySpec();
    writeFileSync(
      join(copy.root, 'spec/providers/fal-queue.yaml'),
      `${head('fal-queue')}fields:\n  watermark: { unsupported: true }\n  reference_video_urls: { unsupported: true }\n`,
    );
    const table = loadCatalogue(copy.root).providers.find((p) => p.protocol === 'fal-queue')!;
    expect(table.unsupported[MINI]).toEqual({ watermark: { default: false }, reference_video_urls: {} });
    expect(table.unsupported[MODEL_D]).toEqual({ reference_video_urls: {} });
  });

  it('the committed mappings: jobs sends every model as it is, openai-videos renames duration_seconds, fal and Replicate name fields their way', () => {
    expect(PROVIDER_PROTOCOLS).toEqual(['openai-videos', 'jobs', 'fal-queue', 'replicate']);
    for (const model of catalogue.values()) {
      expect(providerMapping('jobs', model.info.id), model.info.id).toMatchObject({
        otherFields: 'pass',
        fields: {},
        serves: 'all',
        unmapped: {},
        unsupported: {},
      });
      expect(providerMapping('openai-videos', model.info.id)?.fields.duration_seconds).toEqual({
        to: 'seconds',
        as: 'string',
      });
      // Every model can go to both hosted protocols, each with its result where the protocol has it.
      expect(providerMapping('fal-queue', model.info.id), model.info.id).toMatchObject({ result: 'video.url' });
      expect(providerMapping('replicate', model.info.id), model.info.id).toMatchObject({ result: 'output' });
    }
    const input = {
      prompt: 'a fox',
      duration_seconds: 5,
      image_url: 'https://example.com/a.png',
      last_image_url: 'https://example.com/b.png',
      resolution: '720p',
      seed: 3,
      watermark: false,
      return_last_frame: false,
    };
    const I2V = 'vendor_a/family_a-2.0-mini/image-to-video';
    expect(
      mapInput(providerMapping('fal-queue', I2V)!, {
        ...input,
        bitrate_mode: 'standard',
        enable_web_search: false,
        generate_audio: true,
      }),
    ).toEqual({
      ok: true,
      body: {
        prompt: 'a fox',
        duration: '5',
        image_url: 'https://example.com/a.png',
        end_image_url: 'https://example.com/b.png',
        resolution: '720p',
        seed: 3,
        generate_audio: true,
      },
    });
    expect(
      mapInput(providerMapping('replicate', I2V)!, { ...input, bitrate_mode: 'standard', enable_web_search: false }),
    ).toEqual({
      ok: true,
      body: {
        prompt: 'a fox',
        duration: 5,
        image: 'https://example.com/a.png',
        last_frame_image: 'https://example.com/b.png',
        resolution: '720p',
        seed: 3,
      },
    });
    // A family's own names (vendor_c), and a value only the default of which a protocol takes.
    expect(
      mapInput(providerMapping('replicate', 'vendor_c/o3/image-to-video')!, {
        prompt: 'x',
        image_url: 'https://example.com/a.png',
      }),
    ).toEqual({ ok: true, body: { prompt: 'x', start_image: 'https://example.com/a.png' } });
    expect(mapInput(providerMapping('fal-queue', I2V)!, { ...input, watermark: true })).toEqual({
      ok: false,
      field: 'watermark',
      value: true,
    });
  });
});

/** mapInput: a provider mapping applied to a validated input (runtime/upstreams/map-input.ts). */
type Mapping = Parameters<typeof mapInput>[0];
/** A mapping of protocol x that passes other fields on, serves every input and sets nothing; `part` says what differs. */
const mapping = (part: Partial<Mapping>): Mapping => ({
  protocol: 'x',
  otherFields: 'pass',
  serves: 'all',
  unmapped: {},
  unsupported: {},
  set: {},
  fields: {},
  ...part,
});
const MAPPED: [string, { mapping: Mapping; input: Record<string, unknown>; want: ReturnType<typeof mapInput> }][] = [
  [
    'renamed, converted, dropped, nested, constants added',
    {
      mapping: mapping({
        set: { options: { safety: true } },
        fields: {
          prompt: { to: 'text' },
          duration_seconds: { to: 'seconds', as: 'string' },
          watermark: { drop: true },
          image_url: { to: 'image.url' },
        },
      }),
      input: { prompt: 'a fox', duration_seconds: 8, watermark: true, image_url: 'https://example.com/a.png', seed: 7 },
      want: {
        ok: true,
        body: {
          text: 'a fox',
          seconds: '8',
          image: { url: 'https://example.com/a.png' },
          seed: 7,
          options: { safety: true },
        },
      },
    },
  ],
  [
    'values replaced',
    {
      mapping: mapping({ fields: { aspect_ratio: { values: { '16:9': 'landscape', '9:16': 'portrait' } } } }),
      input: { aspect_ratio: '9:16' },
      want: { ok: true, body: { aspect_ratio: 'portrait' } },
    },
  ],
  [
    'a value without a provider value',
    {
      mapping: mapping({
        serves: 'subset',
        unmapped: { aspect_ratio: ['1:1'] },
        fields: { aspect_ratio: { values: { '16:9': 'landscape' } } },
      }),
      input: { aspect_ratio: '1:1' },
      want: { ok: false, field: 'aspect_ratio', value: '1:1' },
    },
  ],
  [
    'an unsupported field at its default: sent as nothing',
    {
      mapping: mapping({
        serves: 'subset',
        unsupported: { loras: { default: [] } },
        fields: { loras: { unsupported: true } },
      }),
      input: { prompt: 'a fox', loras: [] },
      want: { ok: true, body: { prompt: 'a fox' } },
    },
  ],
  [
    'an unsupported field set otherwise (or one without a default, set at all)',
    {
      mapping: mapping({
        serves: 'subset',
        unsupported: { reference_file_url: {} },
        fields: { reference_file_url: { unsupported: true } },
      }),
      input: { prompt: 'a fox', reference_file_url: 'https://example.com/a.pdf' },
      want: { ok: false, field: 'reference_file_url', value: 'https://example.com/a.pdf' },
    },
  ],
];

describe('mapInput', () => {
  it.each(MAPPED)('%s', (_name, { mapping, input, want }) => {
    expect(mapInput(mapping, input)).toEqual(want);
    // inputMaps is the routing side of the same answer: a deployment takes exactly the inputs that map.
    expect(inputMaps(mapping, input)).toBe(want.ok);
  });
});
