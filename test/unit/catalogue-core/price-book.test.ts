import { describe, expect, it } from 'vitest';
import { chargeCredits } from '../../../catalogue-core/money.js';
import type { PriceResult } from '../../../catalogue-core/price.js';
import { creditsAtPercent, priceAtPercent } from '../../../catalogue-core/price-book.js';

const published = (rateHundredths: number, billableSeconds: number, maxBillableSeconds: number): PriceResult => ({
  rate: String(rateHundredths / 100),
  rateHundredths,
  options: {},
  billableSeconds,
  maxBillableSeconds,
  estimatedCredits: chargeCredits(rateHundredths, billableSeconds),
  maxCredits: chargeCredits(rateHundredths, maxBillableSeconds),
});

describe('price books: the percent scales the rate before the one ceiling', () => {
  it.each([
    ['100 % is the published charge', { given: [675, 5, 100], want: 34 }],
    ['80 % of an exact charge', { given: [1000, 5, 80], want: 40 }],
    // Rounding twice would give ceil(0.8 × ceil(16.9)) = ceil(13.6) = 14; once: ceil(13.52) = 14.
    ['80 % of 3.38/s over 5 s', { given: [338, 5, 80], want: 14 }],
    // Twice: ceil(0.8 × ceil(3.38)) = ceil(3.2) = 4; once: ceil(2.704) = 3.
    ['80 % of 3.38/s over 1 s (twice would be 4)', { given: [338, 1, 80], want: 3 }],
    // Twice: ceil(0.5 × ceil(1.01)) = 1; once: ceil(0.505) = 1; at 3 s: twice ceil(0.5 × 4) = 2, once ceil(1.515) = 2.
    ['50 % of 1.01/s over 3 s', { given: [101, 3, 50], want: 2 }],
    // Twice: ceil(0.9 × ceil(0.01 × 1)) = 1; once: ceil(0.009) = 1; at 100 s: ceil(0.9) = 1 either way.
    ['a charge below one credit is one credit', { given: [1, 1, 90], want: 1 }],
    // Twice: ceil(1.5 × ceil(6.75 × 3)) = ceil(1.5 × 21) = 32; once: ceil(30.375) = 31.
    ['150 % of 6.75/s over 3 s (twice would be 32)', { given: [675, 3, 150], want: 31 }],
    ['zero seconds', { given: [999, 0, 80], want: 0 }],
    ['the cap over an hour at a high rate', { given: [11670, 3600, 1000], want: 4201200 }],
  ] as const)('creditsAtPercent: %s', (_name, { given, want }) => {
    expect(creditsAtPercent(given[0], given[1], given[2])).toBe(want);
  });

  it.each([
    ['the default book returns the published price itself', { given: [published(675, 5, 15), 100], want: [34, 102] }],
    [
      '80 %: estimated and max from the rate, not from the rounded credits',
      { given: [published(338, 1, 15), 80], want: [3, 41] },
    ],
    ['a percent above 100', { given: [published(675, 3, 3), 150], want: [31, 31] }],
  ] as const)('priceAtPercent: %s', (_name, { given, want }) => {
    const [price, percent] = given;
    const result = priceAtPercent(price, percent);
    expect([result.estimatedCredits, result.maxCredits]).toEqual(want);
    expect({ ...result, estimatedCredits: 0, maxCredits: 0 }).toEqual({ ...price, estimatedCredits: 0, maxCredits: 0 });
  });
});
