/** The settlement rule's cases: settled-charge.test.ts checks settledCharge with them, ledger.test.ts each engine's settlement statement. */
export const SETTLED_CHARGE_CASES: [string, { given: { charge: number; held: number }; want: number }][] = [
  ['a charge below the hold', { given: { charge: 30, held: 100 }, want: 30 }],
  ['a charge equal to the hold', { given: { charge: 100, held: 100 }, want: 100 }],
  ['a charge above the hold is capped at it', { given: { charge: 140, held: 100 }, want: 100 }],
  ['a negative charge spends nothing', { given: { charge: -5, held: 100 }, want: 0 }],
  ['a zero charge spends nothing', { given: { charge: 0, held: 100 }, want: 0 }],
  ['a hold of nothing spends nothing', { given: { charge: 10, held: 0 }, want: 0 }],
];
