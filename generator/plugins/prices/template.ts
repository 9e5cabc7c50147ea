/*
 * generated/prices.ts: the price of a normalized input, by model id. Each model's table is data
 * from its spec file (generator/plugins/prices); the code below is this plugin's template,
 * printed with the tables filled in. Rates are integer hundredths of a credit, matched
 * first-row-wins; all arithmetic is integer (support.ts computePrice).
 */
import { computePrice, given, type BillingConfig, type PriceFacts, type PriceResult } from '../support/template.js';

/** A pricing option: read from an input field, or whether a field is given (non-empty). */
export type PriceOption = { name: string; from: string } | { name: string; nonEmpty: string };

/** One row of a rate table: the option values it applies to, and its rate. */
export interface RateRow {
  when: Record<string, string | number | boolean>;
  rateHundredths: number;
  rate: string;
}

export interface PriceTable {
  billing: BillingConfig;
  options: readonly PriceOption[];
  rates: readonly RateRow[];
}

/** Every model's price table, by model id (filled in by the generator). */
const PRICE_TABLES: Record<string, PriceTable> = {};

function optionValues(table: PriceTable, input: Record<string, unknown>): Record<string, string | number | boolean> {
  const values: Record<string, string | number | boolean> = {};
  for (const option of table.options)
    values[option.name] =
      'nonEmpty' in option ? given(input[option.nonEmpty]) : (input[option.from] as string | number | boolean);
  return values;
}

/**
 * The model's price function. The rows' conditions are turned into [name, value] lists once, and
 * matched with plain loops: pricing runs on every quote and createTask.
 */
function priceFunction(table: PriceTable): (input: Record<string, unknown>, facts?: PriceFacts) => PriceResult {
  const rows = table.rates.map((row) => ({ row, when: Object.entries(row.when) }));
  return (input, facts = {}) => {
    const values = optionValues(table, input);
    const row = firstMatchingRow(rows, values);
    return computePrice(input, facts, table.billing, [row.rateHundredths, row.rate], values);
  };
}

/** The first row whose option values all match (first row wins). */
function firstMatchingRow(
  rows: readonly { row: RateRow; when: [string, string | number | boolean][] }[],
  values: Record<string, string | number | boolean>,
): RateRow {
  for (const { row, when } of rows) {
    let matches = true;
    for (const [name, value] of when) {
      if (values[name] !== value) {
        matches = false;
        break;
      }
    }
    if (matches) return row;
  }
  throw new Error('no rate row matches');
}

/** Price of a normalized input (from validateInput), by model id. */
export const prices: ReadonlyMap<string, (input: Record<string, unknown>, facts?: PriceFacts) => PriceResult> = new Map(
  Object.entries(PRICE_TABLES).map(([id, table]) => [id, priceFunction(table)]),
);
