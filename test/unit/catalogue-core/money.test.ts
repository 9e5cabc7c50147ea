import { describe, expect, it } from 'vitest';
import { ceilDiv, chargeCredits, creditsToUsd, usdToCredits } from '../../../catalogue-core/money.js';

describe('money: integer credits', () => {
  it.each([
    ['exact', { given: [10, 5], want: 2 }],
    ['a remainder rounds up', { given: [10, 3], want: 4 }],
    ['zero', { given: [0, 7], want: 0 }],
    ['beyond 2^32', { given: [2 ** 40 + 1, 2], want: 2 ** 39 + 1 }],
  ] as const)('ceilDiv: %s', (_name, { given, want }) => {
    expect(ceilDiv(given[0], given[1])).toBe(want);
  });

  it.each([
    ['a whole credit', { given: [100, 1], want: 1 }],
    ['hundredths round up to a credit', { given: [165, 5], want: 9 }],
    ['exact hundredths', { given: [555, 5], want: 28 }],
    ['zero seconds', { given: [999, 0], want: 0 }],
    ['an hour at a high rate', { given: [11670, 3600], want: 420120 }],
  ] as const)('chargeCredits: %s', (_name, { given, want }) => {
    expect(chargeCredits(given[0], given[1])).toBe(want);
  });

  it.each([
    ['zero', { given: 0, want: '0.00' }],
    ['cents', { given: 7, want: '0.07' }],
    ['dollars and cents', { given: 1234, want: '12.34' }],
    ['a negative amount', { given: -150, want: '-1.50' }],
    ['thousands', { given: 100000, want: '1000.00' }],
  ] as const)('creditsToUsd: %s', (_name, { given, want }) => {
    expect(creditsToUsd(given)).toBe(want);
  });

  it.each([
    ['two places', { given: '12.34', want: 1234 }],
    ['one place', { given: '0.5', want: 50 }],
    ['whole dollars', { given: '3', want: 300 }],
    ['zero', { given: '0', want: 0 }],
    ['thirteen digits', { given: '9999999999999.99', want: 999999999999999 }],
    ['three places', { given: '1.234', want: undefined }],
    ['a leading zero', { given: '01.00', want: undefined }],
    ['negative', { given: '-1.00', want: undefined }],
    ['an exponent', { given: '1e3', want: undefined }],
    ['a bare point', { given: '1.', want: undefined }],
    ['fourteen digits', { given: '10000000000000', want: undefined }],
    ['empty', { given: '', want: undefined }],
  ] as const)('usdToCredits: %s', (_name, { given, want }) => {
    expect(usdToCredits(given)).toBe(want);
  });
});
