import { describe, expect, it } from 'vitest';
import { settledCharge } from '../../../runtime/ledger/settled-charge.js';

describe('settledCharge: the part of a hold a settlement spends', () => {
  it.each([
    ['a charge below the hold', { given: { charge: 30, held: 100 }, want: 30 }],
    ['a charge equal to the hold', { given: { charge: 100, held: 100 }, want: 100 }],
    ['a charge above the hold is capped at it', { given: { charge: 140, held: 100 }, want: 100 }],
    ['a negative charge spends nothing', { given: { charge: -5, held: 100 }, want: 0 }],
    ['a zero charge spends nothing', { given: { charge: 0, held: 100 }, want: 0 }],
    ['a hold of nothing spends nothing', { given: { charge: 10, held: 0 }, want: 0 }],
  ])('%s', (_name, { given, want }) => {
    expect(settledCharge(given.charge, given.held)).toBe(want);
  });
});
