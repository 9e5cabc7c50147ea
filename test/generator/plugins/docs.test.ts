import { describe, it, expect } from 'vitest';
import { catalogue as generated } from '../../../generated/catalogue.js';
import { docsPlugin, hasReferenceLists } from '../../../generator/plugins/docs/emit.js';
import type { GeneratedFile } from '../../../generator/plugin.js';
import { projectCatalogue } from '../../support/catalogue.js';
import { PUBLISHED } from '../../support/published-minimums.js';

const catalogue = projectCatalogue();
const emitDocs = async () => docsPlugin.emit({ catalogue, emitted: new Map() });
const files = await emitDocs();
const byPath = new Map(files.map((f: GeneratedFile) => [f.path, f.contents]));
const page = (path: string) => {
  const contents = byPath.get(path);
  if (contents === undefined) throw new Error(`not emitted: ${path}`);
  return contents;
};
const modelPage = (id: string) => page(`docs/models/${id}.md`);

/** The JSON body of the page's curl example: between `-d '` and the closing quote. */
function curlBody(contents: string): { model: string; input: Record<string, unknown> } {
  const start = contents.indexOf("-d '");
  const end = contents.indexOf("'\n```", start);
  expect(start).toBeGreaterThan(0);
  expect(end).toBeGreaterThan(start);
  return JSON.parse(contents.slice(start + 4, end).replace(/'\\''/g, "'"));
}

const modelIds = catalogue.models.map((m) => m.id);

describe('docs plugin', () => {
  it('emits one page per model, the index, the error page, the decisions page and the providers page, and nothing else', () => {
    expect([...byPath.keys()].sort()).toEqual(
      [
        ...modelIds.map((id) => `docs/models/${id}.md`),
        'docs/index.md',
        'docs/errors.md',
        'docs/decisions.md',
        'docs/providers.md',
      ].sort(),
    );
    expect(modelIds.filter((id) => id.endsWith('/reference-to-video')).length).toBe(17);
  });

  it('the providers page: per protocol, the models it cannot serve and why (derived), and what it serves in part', () => {
    const page = byPath.get('docs/providers.md')!;
    expect(page).toContain(
      '| `vendor_d/family_d/reference-to-video` | it requires reference_image_urls, which `spec/providers/minimax.yaml` does not take (unsupported) |',
    );
    expect(page).toContain(
      '| `vendor_d/family_d/video-extend` | `spec/providers/runway.yaml` has no submit path for mode video-extend |',
    );
    expect(page).toContain('| `vendor_a/family_a-2.5/text-to-video` | aspect_ratio `adaptive` |');
    expect(page).toMatch(/## jobs\n\n[^\n]+\n\nEvery model of the catalogue can be sent there\./);
  });

  it('is deterministic: emitting twice gives identical bytes', async () => {
    const again = await emitDocs();
    expect(again.map((f) => [f.path, f.contents])).toEqual(files.map((f) => [f.path, f.contents]));
  });

  it.each(files.map((f) => [f.path, f] as const))('%s is tidy Markdown without its own header', (_, file) => {
    expect(file.contents).not.toMatch(/\r/);
    expect(file.contents).not.toMatch(/[ \t]+\n/);
    expect(file.contents).not.toMatch(/\n\n\n/);
    expect(file.contents.endsWith('\n') && !file.contents.endsWith('\n\n')).toBe(true);
    expect(file.contents).not.toMatch(/do not edit/i);
    expect(file.contents.startsWith('# ')).toBe(true);
    expect(file.inputs.length).toBeGreaterThan(0);
  });

  describe('vendor_d/family_d/reference-to-video', () => {
    const contents = modelPage('vendor_d/family_d/reference-to-video');

    it.each([
      ['768p', '5.55', '0.0555', 28, '0.28'],
      ['2k', '8.7', '0.087', 44, '0.44'],
    ])('has the rate row %s: %s credits/s, 5 s = %i credits', (resolution, rate, usd, five, fiveUsd) => {
      expect(contents).toContain(`| ${resolution} | ${rate} | ${usd} | ${five} | ${fiveUsd} |`);
    });

    it('states the minimum for 5 s, the cross-field rule and the marker example', () => {
      expect(contents).toContain('Minimum for 5 s: 28 credits (0.28 USD)');
      expect(contents).toContain('- `duration-4-only-at-768p`: resolution must be 768p when duration_seconds is 4');
      expect(contents).toContain('`The cat of Picture 1 jumps like the one in <Video 1>.`');
      expect(contents).toContain('`picture-angle-video`');
    });

    it('shows fields, reference limits and when they are checked', () => {
      expect(contents).toContain('| `reference_image_urls` | array of strings | yes |');
      expect(contents).toContain('| `enable_prompt_expansion` | boolean | no | `false` | `false` |');
      expect(contents).toContain(
        '| video | `reference_video_urls` | up to 3 items | up to 15 s in total | at acceptance (external links: during generation) |',
      );
      expect(contents).toContain('| image | `reference_image_urls` | 1–9 items |');
      expect(contents).toContain('References add nothing to the billable seconds.');
      expect(contents).toContain('## Decisions where the specification is silent');
      expect(contents).toContain('known clips over 15 s in all are rejected with 400 and nothing is held');
      // family_d publishes no sizes: the page shows the standard table and says so.
      expect(contents).toContain('## Output sizes');
      expect(contents).toContain("mediaforge's standard table");
      expect(contents).toContain('| 16:9 | 1366x768 | 2560x1440 |');
      // Its one assumption: the frame rate, which the specification does not publish for it.
      expect(contents).toContain('## Assumptions');
      expect(contents).toContain(
        '- Frame rate: 24 frames per second (the specification publishes none for this model).',
      );
    });
  });

  describe('the Output section: what the file is, and what the simulator returns (issue 21 item 3)', () => {
    it.each([
      [
        'vendor_e/q4-preview/reference-to-video',
        [
          '- File: MP4 (`video/mp4`, `.mp4`).',
          '- Frame rate: 24 frames per second.\n',
          '- Video codec: 540p, 720p and 1080p: H.264; 2k and 4k: 10-bit HEVC.',
          '- At 2k and 4k the model returns 10-bit HEVC; the simulator returns H.264 (8-bit).',
        ],
        ['Last frame:', 'the model chooses the shape'],
      ],
      [
        'vendor_a/family_a-2.5/text-to-video',
        [
          '- File: set by `output_format`: `mp4` (default): MP4 (`video/mp4`, `.mp4`); `mov`: QuickTime (`video/quicktime`, `.mov`).',
          '- Frame rate: 24 frames per second (assumed: the specification publishes none for this model; see Assumptions).',
          '- Last frame: with `return_last_frame` `true` the task has a second output asset, the final frame as a PNG image (`image/png`) of the same width and height.',
          '- With `aspect_ratio` `adaptive` the model chooses the shape; the simulator does not read the references and returns the 16:9 size of the asked resolution: 480p 854x480, 720p 1280x720 and 1080p 1920x1080.',
          'none when `generate_audio` is `false`',
        ],
        ['10-bit HEVC'],
      ],
      [
        'vendor_c/4.0/text-to-video',
        [
          '- With `aspect_ratio` `auto` the model chooses the shape; the simulator does not read the references and returns the 16:9 size of the asked resolution: 720p 1280x720 and 1080p 1920x1080.',
          '- Video codec: not published.',
        ],
        ['Last frame:', '`output_format`'],
      ],
      [
        'vendor_b/family_c-2.6/image-to-video',
        [
          "- The model's frame shape follows the supplied frame or clip; the simulator does not read it and returns the 16:9 size of the asked resolution: 720p 1280x720 and 1080p 1920x1080.",
          '- Frame size: the shape follows the input (the supplied frame or clip; there is no `aspect_ratio`), at the size `resolution` asks for.',
        ],
        ['the model chooses the shape'],
      ],
      [
        'vendor_d/family_d/text-to-video',
        [
          "- Frame size: the width and height of the output sizes table for the request's `aspect_ratio` and `resolution`.\n",
        ],
        ['does not read'],
      ],
    ] as const)('%s', (id, present, absent) => {
      const contents = modelPage(id);
      expect(contents).toContain('## Output\n');
      expect(contents).toContain('### What the simulator returns');
      for (const text of present) expect(contents).toContain(text);
      for (const text of absent) expect(contents).not.toContain(text);
    });
  });

  describe('vendor_b/family_c-2.6/reference-to-video', () => {
    const contents = modelPage('vendor_b/family_c-2.6/reference-to-video');

    it('explains reference clips in the billable seconds', () => {
      expect(contents).toContain('Plus the reference clips in `reference_video_urls`');
      expect(contents).toContain('counts up to 5 s in total');
      expect(contents).toContain('The hold assumes 5 reference seconds');
      expect(contents).not.toContain('counting at least');
    });

    it('shows the output sizes', () => {
      expect(contents).toContain('| aspect_ratio | 720p | 1080p |');
      expect(contents).toContain('| 4:3 | 1088x832 | 1632x1248 |');
    });

    it('states the reference total rule', () => {
      expect(contents).toContain(
        '- `at-most-5-references`: at most 5 items in all across reference_image_urls and reference_video_urls',
      );
    });
  });

  it('counts a 1 s minimum per clip on family_c-2.6-flash', () => {
    expect(modelPage('vendor_b/family_c-2.6-flash/reference-to-video')).toContain('counting at least 1 s per clip');
  });

  it('shows auto durations and the hold at the longest duration', () => {
    const contents = modelPage('vendor_a/family_a-2.0-mini/reference-to-video');
    expect(contents).toContain('| `duration_seconds` | integer | no | `-1` (model chooses) or 4–15 | `5` |');
    expect(contents).toContain(
      'the hold is taken at the longest duration, 15 s, and the charge is settled at the actual length',
    );
    expect(contents).toContain('| 480p | true | any | 5.4 | 0.054 | 27 | 0.27 |');
    expect(contents).toContain('- `with_video` (pricing option): The specification does not say what sets with_video.');
    expect(modelPage('vendor_b/family_c-3.0/reference-to-video')).toContain('`-1` (model chooses) or 1–30');
  });

  it.each([
    [
      'vendor_b/family_c-3.0/reference-to-video',
      'formats JPEG, PNG, BMP, WEBP; no transparency; each side 240–8000 px; up to 20 MB',
    ],
    [
      'vendor_b/family_c-3.0/reference-to-video',
      'Reference video seconds plus `duration_seconds` must not exceed 30 s (checked during generation (published))',
    ],
    ['vendor_b/family_b-1.1/reference-to-video', 'shortest side at least 400 px'],
    [
      'vendor_e/q4-preview/reference-to-video',
      '| audio | `reference_audio_urls` | up to 3 items | formats MP3; each file 3–12 s | at acceptance (external links: during generation) |',
    ],
    [
      'vendor_c/o3/reference-to-video',
      '- `multi-prompt-adds-up-to-duration`: the duration_seconds values of the multi_prompt entries must add up to duration_seconds',
    ],
    [
      'vendor_c/o3/reference-to-video',
      '- `customize-needs-multi-prompt`: multi_prompt is required when shot_type is customize',
    ],
    [
      'vendor_a/family_a-2.0/reference-to-video',
      '- `image-or-video-required`: at least one of reference_image_urls or reference_video_urls must be given',
    ],
    ['vendor_d/family_d-lora/reference-to-video', '`path` (required; a direct https link to a .safetensors file'],
  ])('%s says %s', (id, text) => {
    expect(modelPage(id)).toContain(text);
  });

  describe.each(catalogue.models.map((m) => [m.id, m] as const))('%s', (id, model) => {
    const contents = modelPage(id);

    it('has its title, id, every rate row and every section with content', () => {
      expect(contents).toContain(`# ${model.title}\n`);
      expect(contents).toContain(`Model id: \`${id}\``);
      for (const rate of model.pricing.rates)
        expect(contents).toMatch(new RegExp(`\\| ${rate.rate.replace('.', '\\.')} \\| [0-9.]+ \\| \\d+ \\|`));
      for (const field of model.fields) expect(contents).toContain(`| \`${field.name}\` |`);
      for (const rule of model.rules) expect(contents).toContain(`- \`${rule.id}\`: `);
      for (const note of model.notes) expect(contents).toContain(note);
      expect(contents.includes('## Behaviour notes')).toBe(model.notes.length > 0);
      expect(contents.includes('## Output sizes')).toBe(model.outputSizes !== undefined);
    });

    it("has a curl example whose body passes the model's generated validator without marker warnings", () => {
      expect(contents).toContain('curl -X POST "$MEDIAFORGE_URL/api/v1/jobs/createTask?wait=30"');
      expect(contents).toContain('-H "Idempotency-Key: $(uuidgen)"');
      const body = curlBody(contents);
      expect(body.model).toBe(id);
      // The marker example where the model takes reference lists; a plain prompt otherwise (no references to name).
      if (hasReferenceLists(model)) expect(body.input.prompt).toBe(model.markers.example);
      else expect(body.input.prompt).toEqual(expect.any(String));
      const entry = generated.get(id);
      expect(entry).toBeDefined();
      const result = entry!.validate(body.input);
      expect(result).toMatchObject({ ok: true });
      if (result.ok) expect(entry!.warnings(result.value)).toEqual([]);
    });
  });

  describe('index', () => {
    const contents = page('docs/index.md');

    // The 'Minimum for 5 s' column of the specification's rate table.
    it.each(PUBLISHED)('lists %s with the minimum for 5 s of %i credits, linked to its page', (id, minimum) => {
      const usd = `${Math.floor(minimum / 100)}.${String(minimum % 100).padStart(2, '0')}`;
      const row = contents.split('\n').find((line) => line.startsWith(`| [${id}](models/${id}.md) |`));
      expect(row).toBeDefined();
      expect(row).toMatch(new RegExp(`\\| ${minimum} \\| ${usd.replace('.', '\\.')} \\|$`));
      expect(modelPage(id)).toContain(`Minimum for 5 s: ${minimum} credits (${usd} USD)`);
    });

    it('explains pricing and the pricing-option decisions', () => {
      expect(contents).toContain('1 credit = 0.01 USD');
      expect(contents).toContain('rounded up to whole credits per task');
      expect(contents).toContain('Hold and settle');
      expect(contents).toContain('- `with_video`: The specification does not say what sets with_video.');
    });
  });

  describe('errors page', () => {
    const contents = page('docs/errors.md');

    it.each([
      [40001, 400, 'invalid_input', 'The request input is invalid.'],
      [40901, 409, 'quote_conflict', 'The quote has expired or does not match this request.'],
      [50301, 503, 'no_deployment', 'No deployment is available for this model right now.'],
    ])('lists business code %i', (code, http, name, message) => {
      expect(contents).toContain(`| ${code} | ${http} | \`${name}\` | ${message} |`);
    });

    it('lists every public code, validation key, task error and warning of the catalogue', () => {
      const { errors } = catalogue;
      const [internal, open] = [
        errors.codes.filter((c) => c.name.startsWith('console_')),
        errors.codes.filter((c) => !c.name.startsWith('console_')),
      ];
      for (const c of open) expect(contents).toContain(`| ${c.code} | ${c.http} | \`${c.name}\` |`);
      // The console's own refusals answer its internal API only.
      expect(internal.length).toBeGreaterThan(0);
      for (const c of internal) expect(contents).not.toContain(`\`${c.name}\``);
      for (const key of [
        ...Object.keys(errors.validation),
        ...Object.keys(errors.taskErrors),
        ...Object.keys(errors.warnings),
      ]) {
        expect(contents).toContain(`| \`${key}\` |`);
      }
      expect(contents).toContain(
        '| `reference_url` | {field} must be an https URL or a service://a/\\<asset_id> URI. |',
      );
      const codes = [...contents.matchAll(/^\| (\d{5}) \|/gm)].map((m) => Number(m[1]));
      expect(codes).toEqual([...codes].sort((a, b) => a - b));
    });

    it('names the 12 languages and says codes never change with the language', () => {
      expect(catalogue.errors.languages).toHaveLength(12);
      expect(contents).toContain(
        `these 12 languages: ${catalogue.errors.languages.map((l) => `\`${l}\``).join(', ')}.`,
      );
      expect(contents).toContain('never change with the language');
    });
  });
});

describe('decisions written down (issue 21)', () => {
  const decisions = page('docs/decisions.md');

  it.each([
    ['short-clips', { title: 'Clips shorter than 5 seconds', says: 'no minimum charge', interpretation: true }],
    ['key-scopes-and-403', { title: 'API key scopes and when 403 is returned', says: '40305', interpretation: false }],
    [
      'concurrency',
      { title: 'Concurrent tasks per account', says: 'MEDIAFORGE_WORKER_ACCOUNT_CAP', interpretation: false },
    ],
    [
      'prompt-bound',
      { title: 'Models with no published prompt limit', says: '10,000 characters', interpretation: false },
    ],
    [
      'state-transitions',
      { title: "State transitions beyond the specification's table", says: '(states.md)', interpretation: false },
    ],
    ['deprecation', { title: 'Retiring a model', says: 'sunset', interpretation: false }],
  ])('the decisions page has %s under its own heading', (id, { title, says, interpretation }) => {
    const start = decisions.indexOf(`## ${title}\n`);
    expect(start, id).toBeGreaterThan(0);
    const next = decisions.indexOf('\n## ', start + 3);
    const section = decisions.slice(start, next < 0 ? undefined : next);
    expect(section).toContain(says);
    expect(section.includes('*Interpretation of the specification.*')).toBe(interpretation);
  });

  it('links the decisions and the state table from the index', () => {
    expect(page('docs/index.md')).toContain('[decisions](decisions.md)');
    expect(page('docs/index.md')).toContain('[states](states.md)');
  });

  it.each(['family_a-2.0-fast', 'family_a-2.0', 'family_a-2.5'])(
    '%s: the unlabelled true/false rate rows are read as with_video, marked as an interpretation',
    (family) => {
      const contents = modelPage(`vendor_a/${family}/reference-to-video`);
      expect(contents).toMatch(
        new RegExp(
          `- Interpretation: the specification's rate rows for ${family.replace('.', '\\.')} are labelled only true and false.*with_video: true`,
        ),
      );
    },
  );
});
