import type { CatalogueModel } from '../../generated/catalogue.js';
import { bookPercent } from '../../generated/price-books.js';
import { priceAtPercent, type PriceFacts, type PriceResult } from '../../generated/support.js';

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
