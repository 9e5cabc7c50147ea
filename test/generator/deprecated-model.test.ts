import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatMessage } from '../../generated/errors.js';
import { generate } from '../../generator/generate.js';
import { ApiError } from '../../runtime/errors.js';
import { modelSunset } from '../../runtime/tasks/model-sunset.js';
import { copySpec, loadError } from '../support/spec-copy.js';

const ID = 'vendor_f/zeta-1.0/text-to-video';
const REPLACEMENT = 'vendor_d/family_d/reference-to-video';
const SUNSET = '2030-01-01';

/** A model added in a temp copy of spec/, with its retirement written in its YAML. */
const modelFile = (deprecated: string) => `id: ${ID}
title: zeta 1.0, text to video
summary: A model being retired, added in a test.
markers: positional
fields:
  prompt: { required: true, maxLength: 800 }
  duration_seconds: { min: 2, max: 12, default: 4 }
  resolution: { values: [540p, 1080p], default: 540p }
pricing:
  rates:
    - { resolution: 540p, rate: "2.25" }
    - { resolution: 1080p, rate: "7.1" }
${deprecated}`;

function writeModel(root: string, text: string) {
  mkdirSync(join(root, 'spec/models/vendor_f/zeta-1.0'), { recursive: true });
  writeFileSync(join(root, 'spec/models/vendor_f/zeta-1.0/text-to-video.yaml'), text);
}

describe('a deprecated model (spec/model.schema.json `deprecated`)', () => {
  let copy: ReturnType<typeof copySpec>;
  let catalogue: Map<string, any>;
  beforeAll(async () => {
    copy = copySpec();
    writeModel(copy.root, modelFile(`deprecated: { sunset: "${SUNSET}", replacement: ${REPLACEMENT} }\n`));
    await generate(copy.root);
    catalogue = (await import(join(copy.root, 'generated/catalogue.ts'))).catalogue;
  }, 120_000);
  afterAll(() => copy?.remove());

  it('is carried into the generated catalogue (what GET /models returns), the others are null', () => {
    expect(catalogue.get(ID).info.deprecated).toEqual({ sunset: SUNSET, replacement: REPLACEMENT });
    expect(catalogue.get(REPLACEMENT).info.deprecated).toBeNull();
  });

  it('is said on its docs page, with a link to the replacement', () => {
    const page = readFileSync(join(copy.root, 'generated/docs/models', `${ID}.md`), 'utf8');
    expect(page).toContain(`> **Deprecated.** This model is refused from ${SUNSET} (UTC)`);
    const link = `../../${REPLACEMENT}.md`;
    expect(page).toContain(`[\`${REPLACEMENT}\`](${link})`);
    expect(existsSync(join(copy.root, 'generated/docs/models/vendor_f/zeta-1.0', link))).toBe(true);
    expect(readFileSync(join(copy.root, 'generated/docs/models', `${REPLACEMENT}.md`), 'utf8')).not.toContain(
      '**Deprecated.**',
    );
  });

  const sunsetAt = Date.parse(`${SUNSET}T00:00:00Z`);
  it.each([
    ['a year before the sunset', { now: sunsetAt - 365 * 86_400_000, want: 'warning' }],
    ['the last millisecond before it', { now: sunsetAt - 1, want: 'warning' }],
    ['at 00:00 UTC of the sunset date', { now: sunsetAt, want: 'refused' }],
    ['a day after', { now: sunsetAt + 86_400_000, want: 'refused' }],
  ])('createTask, quote and retry %s: %s', (_, { now, want }) => {
    const info = catalogue.get(ID).info;
    if (want === 'warning') {
      const warning = modelSunset(info, now)!;
      expect(warning).toMatchObject({ code: 'model_deprecated', path: 'model' });
      expect(formatMessage(warning.message, 'en')).toBe(
        `The model ${ID} is deprecated and will be refused from ${SUNSET}. Use ${REPLACEMENT} instead.`,
      );
      expect(formatMessage(warning.message, 'de')).toContain(REPLACEMENT);
    } else {
      let thrown: unknown;
      try {
        modelSunset(info, now);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ApiError);
      expect(thrown).toMatchObject({
        errorName: 'model_retired',
        code: 41001,
        status: 410,
        param: 'model',
        params: { model: ID, sunset: SUNSET, replacement: REPLACEMENT },
      });
    }
  });

  it('a current model is neither warned about nor refused', () => {
    expect(modelSunset(catalogue.get(REPLACEMENT).info, sunsetAt + 86_400_000)).toBeUndefined();
  });
});

describe('a deprecated block is checked when spec/ is loaded', () => {
  it.each([
    [
      'an unknown replacement',
      {
        deprecated: `deprecated: { sunset: "${SUNSET}", replacement: vendor_x/none/text-to-video }\n`,
        want: /text-to-video\.yaml:\d+:\d+: replacement "vendor_x\/none\/text-to-video" must be the id of another callable model/,
      },
    ],
    [
      'itself as replacement',
      {
        deprecated: `deprecated: { sunset: "${SUNSET}", replacement: ${ID} }\n`,
        want: /replacement "vendor_f\/zeta-1\.0\/text-to-video" must be the id of another/,
      },
    ],
    [
      'no replacement',
      {
        deprecated: `deprecated: { sunset: "${SUNSET}" }\n`,
        want: /text-to-video\.yaml:\d+:\d+: .*must have required property 'replacement'/,
      },
    ],
    [
      'a sunset that is not a date',
      {
        deprecated: `deprecated: { sunset: "soon", replacement: ${REPLACEMENT} }\n`,
        want: /text-to-video\.yaml:\d+:\d+: .*sunset must match pattern/,
      },
    ],
  ])('%s is refused with its file and line', (_, { deprecated, want }) => {
    const copy = copySpec();
    try {
      writeModel(copy.root, modelFile(deprecated));
      expect(loadError(copy.root).message).toMatch(want);
    } finally {
      copy.remove();
    }
  });
});
