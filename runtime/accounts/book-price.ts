import type { CatalogueModel } from '../../generated/catalogue.js';
import { bookPercent } from '../../generated/price-books.js';
import {
  ceilDiv,
  chargeCredits,
  creditsAtPercent,
  DEFAULT_PERCENT,
  priceAtPercent,
  type PriceFacts,
  type PriceResult,
} from '../../generated/support.js';

/**
 * The one way the runtime prices a request: the model's published price (catalogue-core) at the
 * percent its price book gives the model (null: the published catalogue). quote, createTask,
 * retry, the compatible layer, the playground and settlement all come here, so a book is applied
 * the same way everywhere, and rounded once (catalogue-core/price-book.ts).
 */
export function priceUnderBook(
  model: CatalogueModel,
  input: Record<string, unknown>,
  facts: PriceFacts,
  book: string | null,
): PriceResult {
  return priceAtPercent(model.price(input, facts), bookPercent(book, model.info.id));
}

type Pricing = CatalogueModel['info']['pricing'];

/** A rate in 1/10,000 of a credit per second as the catalogue writes rates: `4.44`, `2.704`, `8.7`. */
function rateText(tenThousandths: number): string {
  const whole = (tenThousandths - (tenThousandths % 10_000)) / 10_000;
  const fraction = String(tenThousandths % 10_000)
    .padStart(4, '0')
    .replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : String(whole);
}

/**
 * A model's published pricing as an account on `book` pays it (GET /api/v1/models for its key):
 * each rate at the book's percent, written exactly (`rate`; `rateHundredths` rounded up, for
 * display: a charge is always the published rate × percent rounded once), and the 5-second
 * minimums priced the same way from the cheapest rate that gave them.
 */
export function pricingUnderBook(modelId: string, pricing: Pricing, book: string | null): Pricing {
  const percent = bookPercent(book, modelId);
  if (percent === DEFAULT_PERCENT) return pricing;
  const cheapestCharging = (credits: number) =>
    Math.min(...pricing.rates.map((r) => r.rateHundredths).filter((rate) => chargeCredits(rate, 5) === credits));
  const minimum = (credits: number) => {
    const rate = cheapestCharging(credits);
    return Number.isFinite(rate) ? creditsAtPercent(rate, 5, percent) : credits;
  };
  return {
    ...pricing,
    rates: pricing.rates.map((row) => ({
      ...row,
      rate: rateText(row.rateHundredths * percent),
      rateHundredths: ceilDiv(row.rateHundredths * percent, 100),
    })),
    minimumFor5sCredits: minimum(pricing.minimumFor5sCredits),
    minimumFor5sWithoutReferencesCredits: minimum(pricing.minimumFor5sWithoutReferencesCredits),
  };
}
