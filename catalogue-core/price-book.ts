/*
 * A price under a price book: the published price (price.ts) at a percent of it. The percent
 * scales the rate in hundredths before the one ceiling, so a charge is rounded once, exactly as
 * the catalogue rounds credits (money.ts chargeCredits), never a float and never rounded twice.
 */
import { ceilDiv } from './money.js';
import type { PriceResult } from './price.js';

/** The published catalogue: the default book, every model at 100 %. */
export const DEFAULT_PERCENT = 100;

/**
 * The largest percent a book may declare (ten times the published price): anything above it is
 * far likelier a typo (8000 for 80.00) than a price, and it keeps rate × seconds × percent a safe integer.
 */
export const PRICE_BOOK_MAX_PERCENT = 1000;

/** Whole credits for `seconds` at `percent` % of a rate in hundredths of a credit per second, rounded up once. */
export function creditsAtPercent(rateHundredths: number, seconds: number, percent: number): number {
  return ceilDiv(rateHundredths * seconds * percent, 100 * 100);
}

/**
 * The published price `price` (computePrice's result) at `percent` %: the credits again from its
 * rate and billable seconds, not from its rounded credits. At 100 % the result is `price` itself.
 */
export function priceAtPercent(price: PriceResult, percent: number): PriceResult {
  if (percent === DEFAULT_PERCENT) return price;
  return {
    ...price,
    estimatedCredits: creditsAtPercent(price.rateHundredths, price.billableSeconds, percent),
    maxCredits: creditsAtPercent(price.rateHundredths, price.maxBillableSeconds, percent),
  };
}
