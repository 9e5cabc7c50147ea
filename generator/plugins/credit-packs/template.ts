/* generated/credit-packs.ts: the credit packs a customer can buy (spec/credit-packs.yaml), and the price of an amount. */

/** One pack: `credits` + `bonus` credited for `price` in the currency's minor units. */
export interface CreditPack {
  name: string;
  credits: number;
  bonus: number;
  price: number;
  currency: string;
}

/** A custom amount: between minCredits and maxCredits, a multiple of creditsPerMinorUnit. */
export interface CustomAmount {
  minCredits: number;
  maxCredits: number;
  creditsPerMinorUnit: number;
  currency: string;
}

/** Every pack, in the order of the spec file. */
export const CREDIT_PACKS: readonly CreditPack[] = [
  { name: 'sample', credits: 1000, bonus: 0, price: 1000, currency: 'usd' },
];

/** The custom amount, or null when the spec file has none. */
export const CUSTOM_AMOUNT: CustomAmount | null = null;

/** The pack named `name`, or undefined. */
export function creditPack(name: string): CreditPack | undefined {
  return CREDIT_PACKS.find((pack) => pack.name === name);
}

/**
 * What a custom amount of `credits` is sold as (a pack named `custom`), or a reason it cannot be:
 * `unavailable` (no custom amount), `range` (outside min..max), `step` (not a multiple of the rate).
 */
export function customPack(credits: number): CreditPack | 'unavailable' | 'range' | 'step' {
  const custom = CUSTOM_AMOUNT;
  if (!custom) return 'unavailable';
  if (!Number.isSafeInteger(credits) || credits < custom.minCredits || credits > custom.maxCredits) return 'range';
  if (credits % custom.creditsPerMinorUnit !== 0) return 'step';
  return {
    name: 'custom',
    credits,
    bonus: 0,
    price: credits / custom.creditsPerMinorUnit,
    currency: custom.currency,
  };
}
