import { describe, expect, it } from 'vitest';
import { catalogue } from '../../../generated/catalogue.js';
import type { PriceFacts } from '../../../generated/support.js';

const IMG = 'https://example.com/a.png';
const CLIP = 'https://example.com/c.mp4';

/** One row per price vector: model, input, facts -> rate, billable seconds, estimate and hold. */
const VECTORS: [
  string,
  {
    model: string;
    input: Record<string, unknown>;
    facts?: PriceFacts;
    want: { rate: string; billable: number; maxBillable: number; estimated: number; max: number };
  },
][] = [
  [
    'family_d 768p 5 s',
    {
      model: 'vendor_d/family_d/reference-to-video',
      input: { prompt: 'p', reference_image_urls: [IMG] },
      want: { rate: '5.55', billable: 5, maxBillable: 5, estimated: 28, max: 28 },
    },
  ],
  [
    'family_d 2k 15 s',
    {
      model: 'vendor_d/family_d/reference-to-video',
      input: { prompt: 'p', reference_image_urls: [IMG], resolution: '2k', duration_seconds: 15 },
      want: { rate: '8.7', billable: 15, maxBillable: 15, estimated: 131, max: 131 },
    },
  ],
  [
    'mini 720p without video',
    {
      model: 'vendor_a/family_a-2.0-mini/reference-to-video',
      input: { prompt: 'p', reference_image_urls: [IMG] },
      want: { rate: '7.94', billable: 5, maxBillable: 5, estimated: 40, max: 40 },
    },
  ],
  [
    'mini 480p with video',
    {
      model: 'vendor_a/family_a-2.0-mini/reference-to-video',
      input: { prompt: 'p', reference_video_urls: [CLIP], resolution: '480p' },
      want: { rate: '1.65', billable: 5, maxBillable: 5, estimated: 9, max: 9 },
    },
  ],
  [
    'mini web search at 720p, video or not',
    {
      model: 'vendor_a/family_a-2.0-mini/reference-to-video',
      input: { prompt: 'p', reference_video_urls: [CLIP], enable_web_search: true },
      want: { rate: '10.8', billable: 5, maxBillable: 5, estimated: 54, max: 54 },
    },
  ],
  [
    'mini -1: estimated at the default, held at the longest',
    {
      model: 'vendor_a/family_a-2.0-mini/reference-to-video',
      input: { prompt: 'p', reference_image_urls: [IMG], duration_seconds: -1 },
      want: { rate: '7.94', billable: 5, maxBillable: 15, estimated: 40, max: 120 },
    },
  ],
  [
    'mini -1 settled at the measured 9 s',
    {
      model: 'vendor_a/family_a-2.0-mini/reference-to-video',
      input: { prompt: 'p', reference_image_urls: [IMG], duration_seconds: -1 },
      facts: { outputSeconds: 9 },
      want: { rate: '7.94', billable: 9, maxBillable: 15, estimated: 72, max: 120 },
    },
  ],
  [
    'family_a-2.0 4k either',
    {
      model: 'vendor_a/family_a-2.0/reference-to-video',
      input: { prompt: 'p', reference_video_urls: [CLIP], resolution: '4k' },
      want: { rate: '116.7', billable: 5, maxBillable: 5, estimated: 584, max: 584 },
    },
  ],
  [
    '2.6 with clips of unknown length: hold assumes 5 s',
    {
      model: 'vendor_b/family_c-2.6/reference-to-video',
      input: { prompt: 'p', reference_video_urls: [CLIP, CLIP] },
      want: { rate: '9.75', billable: 10, maxBillable: 10, estimated: 98, max: 98 },
    },
  ],
  [
    '2.6 with measured clips 1.2 s + 0.4 s -> 2 + 1 s',
    {
      model: 'vendor_b/family_c-2.6/reference-to-video',
      input: { prompt: 'p', reference_video_urls: [CLIP, CLIP] },
      facts: { referenceClipSeconds: [1.2, 0.4] },
      want: { rate: '9.75', billable: 8, maxBillable: 8, estimated: 78, max: 78 },
    },
  ],
  [
    '2.6 reference side capped at 5 s',
    {
      model: 'vendor_b/family_c-2.6/reference-to-video',
      input: { prompt: 'p', reference_video_urls: [CLIP, CLIP, CLIP] },
      facts: { referenceClipSeconds: [4, 4, 4] },
      want: { rate: '9.75', billable: 10, maxBillable: 10, estimated: 98, max: 98 },
    },
  ],
  [
    '2.6 still images add nothing',
    {
      model: 'vendor_b/family_c-2.6/reference-to-video',
      input: { prompt: 'p', reference_image_urls: [IMG, IMG], resolution: '1080p' },
      want: { rate: '14.62', billable: 5, maxBillable: 5, estimated: 74, max: 74 },
    },
  ],
  [
    '2.6-flash audio doubles the rate',
    {
      model: 'vendor_b/family_c-2.6-flash/reference-to-video',
      input: { prompt: 'p', generate_audio: true },
      want: { rate: '6.75', billable: 5, maxBillable: 5, estimated: 34, max: 34 },
    },
  ],
  [
    '2.6-flash a 0.2 s clip counts at least 1 s',
    {
      model: 'vendor_b/family_c-2.6-flash/reference-to-video',
      input: { prompt: 'p', reference_video_urls: [CLIP] },
      facts: { referenceClipSeconds: [0.2] },
      want: { rate: '3.38', billable: 6, maxBillable: 6, estimated: 21, max: 21 },
    },
  ],
  [
    'o3 audio off with a video at 1080p',
    {
      model: 'vendor_c/o3/reference-to-video',
      input: { prompt: 'p', reference_image_urls: [IMG], reference_video_urls: [CLIP], resolution: '1080p' },
      want: { rate: '20.16', billable: 5, maxBillable: 5, estimated: 101, max: 101 },
    },
  ],
  [
    'q4-preview 4k 16 s',
    {
      model: 'vendor_e/q4-preview/reference-to-video',
      input: { prompt: 'p', reference_image_urls: [IMG], resolution: '4k', duration_seconds: 16 },
      want: { rate: '58.5', billable: 16, maxBillable: 16, estimated: 936, max: 936 },
    },
  ],
  [
    '3.0-pro-prime 2k 30 s',
    {
      model: 'vendor_b/family_c-3.0-pro-prime/reference-to-video',
      input: { prompt: 'p', reference_image_urls: [IMG], resolution: '2k', duration_seconds: 30 },
      want: { rate: '37.8', billable: 30, maxBillable: 30, estimated: 1134, max: 1134 },
    },
  ],
];

describe('generated price functions', () => {
  it.each(VECTORS)('%s', (_name, { model, input, facts, want }) => {
    const m = catalogue.get(model)!;
    const validated = m.validate(input);
    expect(validated.ok).toBe(true);
    if (!validated.ok) return;
    const price = m.price(validated.value, facts);
    expect({
      rate: price.rate,
      billable: price.billableSeconds,
      maxBillable: price.maxBillableSeconds,
      estimated: price.estimatedCredits,
      max: price.maxCredits,
    }).toEqual(want);
    expect(Number.isInteger(price.estimatedCredits) && Number.isInteger(price.maxCredits)).toBe(true);
  });
});
