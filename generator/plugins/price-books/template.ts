/*
 * generated/price-books.ts: the price books of spec/price-books/ (never published), each resolved
 * per model at generation, so pricing under a book is a map lookup. The price itself is
 * catalogue-core/price-book.ts (priceAtPercent).
 */
import { DEFAULT_PERCENT } from '../support/template.js';

/** A book as declared: its percent, and its entries (model ids or whole-segment patterns) with their own. */
export interface PriceBook {
  percent: number;
  models: Record<string, number>;
}

/** Every book by name, as its file declares it. */
export const PRICE_BOOKS: Record<string, PriceBook> = {
  sample: { percent: 80, models: { 'vendor_a/*': 85 } },
};

/** Per book, the percent of every catalogue model an entry of the book prices (the most specific entry's). */
const RESOLVED: Record<string, Record<string, number>> = {
  sample: { 'vendor_a/family_a-2.0/text-to-video': 85 },
};

/** The names of the books, sorted. */
export const PRICE_BOOK_NAMES: readonly string[] = Object.keys(PRICE_BOOKS).sort();

/** Whether `name` is a book (the default, `null`, is the published catalogue and no book). */
export function isPriceBook(name: string): boolean {
  return Object.hasOwn(PRICE_BOOKS, name);
}

/** The percent of the published price `modelId` costs under `book` (null or unknown: the published price). */
export function bookPercent(book: string | null, modelId: string): number {
  if (book === null || !Object.hasOwn(PRICE_BOOKS, book)) return DEFAULT_PERCENT;
  return RESOLVED[book][modelId] ?? PRICE_BOOKS[book].percent;
}
