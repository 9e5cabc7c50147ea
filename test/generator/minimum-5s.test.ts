import { describe, expect, it } from 'vitest';
import { catalogue } from '../../generated/catalogue.js';
import { vectorsPlugin } from '../../generator/plugins/vectors/emit.js';
import { projectCatalogue } from '../support/catalogue.js';
import { PUBLISHED } from '../support/published-minimums.js';

const vectorFiles = vectorsPlugin.emit({ catalogue: projectCatalogue(), emitted: new Map() }) as {
  path: string;
  contents: string;
}[];

/** An accepted input of the model, from its generated boundary vectors. */
function baseInput(id: string): Record<string, unknown> {
  const file = vectorFiles.find((f) => f.path === `vectors/${id}.json`)!;
  const { cases } = JSON.parse(file.contents) as { cases: { input: Record<string, unknown>; want: unknown }[] };
  return cases.find((c) => c.want === 'accept')!.input;
}

/**
 * The cheapest 5-second request the model accepts, found by trying every value of every pricing
 * option through the generated validator and price function: the YAML alone decides the figure.
 */
function cheapestFiveSeconds(id: string): number {
  const model = catalogue.get(id)!;
  const props = model.info.inputSchema.properties;
  const variants: [string, unknown[]][] = [];
  if (props.resolution?.enum) variants.push(['resolution', props.resolution.enum as unknown[]]);
  for (const flag of ['generate_audio', 'enable_web_search']) if (props[flag]) variants.push([flag, [true, false]]);
  if (props.reference_video_urls)
    variants.push(['reference_video_urls', [undefined, ['https://example.com/clip.mp4']]]);
  let inputs = [{ ...baseInput(id), duration_seconds: 5 } as Record<string, unknown>];
  for (const [field, values] of variants) {
    inputs = inputs.flatMap((input) =>
      values.map((v) => {
        const next = { ...input, [field]: v };
        if (v === undefined) delete next[field];
        return next;
      }),
    );
  }
  let minimum = Infinity;
  for (const input of inputs) {
    const result = model.validate(input);
    if (!result.ok) continue;
    // Reference clips of known length 0 s add no billable seconds: the 5-second clip alone.
    const clips = Array.isArray(result.value.reference_video_urls)
      ? result.value.reference_video_urls.map(() => 0)
      : [];
    minimum = Math.min(minimum, model.price(result.value, { referenceClipSeconds: clips }).estimatedCredits);
  }
  return minimum;
}

describe('the minimum for 5 s, reproduced from the YAML', () => {
  it('covers every reference-to-video model of the catalogue (the other modes have no published figure)', () => {
    const referenceToVideo = [...catalogue.values()]
      .filter((m) => m.info.mode === 'reference-to-video')
      .map((m) => m.info.id);
    expect(referenceToVideo.sort()).toEqual(PUBLISHED.map(([id]) => id).sort());
  });

  it.each(PUBLISHED)('%s: %i credits', (id, want) => {
    expect(cheapestFiveSeconds(id)).toBe(want);
    expect(catalogue.get(id)!.info.pricing.minimumFor5sCredits).toBe(want);
  });
});
