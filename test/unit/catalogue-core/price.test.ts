import { describe, expect, it } from 'vitest';
import { type BillingConfig, computePrice, type PriceFacts } from '../../../catalogue-core/price.js';

const RATE = [555, '5.55'] as const;
const DURATION: BillingConfig = { durationField: 'duration', auto: -1, maxDuration: 12, defaultDuration: 5 };
/** The output as long as the source clip, 10 s assumed while its length is unknown. */
const CLIP_LENGTH: BillingConfig = { sourceClip: { field: 'video', output: 'clip-length', assumedSeconds: 10 } };

describe('billable seconds and price', () => {
  const cases: [
    string,
    {
      given: { input: Record<string, unknown>; facts?: PriceFacts; config: BillingConfig };
      want: { billableSeconds: number; maxBillableSeconds: number; estimatedCredits: number; maxCredits: number };
    },
  ][] = [
    [
      'a fixed duration',
      {
        given: { input: { duration: 5 }, config: DURATION },
        want: { billableSeconds: 5, maxBillableSeconds: 5, estimatedCredits: 28, maxCredits: 28 },
      },
    ],
    [
      'auto: estimated at the default, held at the maximum',
      {
        given: { input: { duration: -1 }, config: DURATION },
        want: { billableSeconds: 5, maxBillableSeconds: 12, estimatedCredits: 28, maxCredits: 67 },
      },
    ],
    [
      'auto settled at the measured length, rounded up',
      {
        given: { input: { duration: -1 }, facts: { outputSeconds: 7.2 }, config: DURATION },
        want: { billableSeconds: 8, maxBillableSeconds: 12, estimatedCredits: 45, maxCredits: 67 },
      },
    ],
    [
      'reference clips of unknown length: the assumed hold',
      {
        given: {
          input: { duration: 5, clips: ['a', 'b'] },
          config: { ...DURATION, referenceClips: { field: 'clips', maxTotalSeconds: 15, holdAssumesSeconds: 15 } },
        },
        want: { billableSeconds: 20, maxBillableSeconds: 20, estimatedCredits: 111, maxCredits: 111 },
      },
    ],
    [
      'reference clips measured, each at least its minimum',
      {
        given: {
          input: { duration: 5, clips: ['a', 'b'] },
          facts: { referenceClipSeconds: [1.2, 4] },
          config: {
            ...DURATION,
            referenceClips: { field: 'clips', maxTotalSeconds: 15, perClipMinimumSeconds: 3, holdAssumesSeconds: 15 },
          },
        },
        want: { billableSeconds: 12, maxBillableSeconds: 12, estimatedCredits: 67, maxCredits: 67 },
      },
    ],
    [
      'a clip-length source clip: its length is the duration',
      {
        given: {
          input: {},
          facts: { sourceClipSeconds: 6.2 },
          config: CLIP_LENGTH,
        },
        want: { billableSeconds: 7, maxBillableSeconds: 7, estimatedCredits: 39, maxCredits: 39 },
      },
    ],
    [
      'a length is measured to the millisecond: 6.0001 s is 6 s',
      {
        given: {
          input: {},
          facts: { sourceClipSeconds: 6.0001 },
          config: CLIP_LENGTH,
        },
        want: { billableSeconds: 6, maxBillableSeconds: 6, estimatedCredits: 34, maxCredits: 34 },
      },
    ],
    [
      'a clip-length source clip of unknown length: the assumed seconds',
      {
        given: { input: {}, config: CLIP_LENGTH },
        want: { billableSeconds: 10, maxBillableSeconds: 10, estimatedCredits: 56, maxCredits: 56 },
      },
    ],
    [
      'a joined source clip, not billed: the new segment only, after the output is measured',
      {
        given: {
          input: { duration: 5 },
          facts: { sourceClipSeconds: 4, outputSeconds: 9.5 },
          config: { ...DURATION, sourceClip: { field: 'video', output: 'joined', assumedSeconds: 10 } },
        },
        want: { billableSeconds: 6, maxBillableSeconds: 6, estimatedCredits: 34, maxCredits: 34 },
      },
    ],
  ];

  it.each(cases)('%s', (_name, { given, want }) => {
    const price = computePrice(given.input, given.facts ?? {}, given.config, RATE, { resolution: '720p' });
    expect(price).toEqual({ rate: '5.55', rateHundredths: 555, options: { resolution: '720p' }, ...want });
  });
});
