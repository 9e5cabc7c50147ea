import { describe, expect, it } from 'vitest';
import { settledCharge } from '../../../runtime/ledger/settled-charge.js';
import { SETTLED_CHARGE_CASES } from './settled-charge-cases.js';

/** The rule in TypeScript; its SQL form (PostgreSQL's settlement statement) runs the same cases in ledger.test.ts. */
describe('settledCharge: the part of a hold a settlement spends', () => {
  it.each(SETTLED_CHARGE_CASES)('%s', (_name, { given, want }) => {
    expect(settledCharge(given.charge, given.held)).toBe(want);
  });
});
