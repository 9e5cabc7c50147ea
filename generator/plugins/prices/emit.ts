import type { Model } from '../../load/types.js';
import { allModelInputs, type Plugin } from '../../plugin.js';
import { printModule } from '../../print/module.js';
import type { PriceOption, PriceTable } from './template.js';

/** The pricing config a model's price function passes to computePrice. */
export function billingConfig(model: Model): PriceTable['billing'] {
  const duration = model.fields.find((f) => f.name === 'duration_seconds');
  const config: PriceTable['billing'] = {};
  if (duration) {
    const range = (duration.schema.anyOf as Record<string, number>[] | undefined)?.[1] ?? duration.schema;
    config.durationField = 'duration_seconds';
    if (duration.auto !== undefined) config.auto = duration.auto;
    if (typeof range.maximum === 'number') config.maxDuration = range.maximum;
    if (typeof duration.schema.default === 'number') config.defaultDuration = duration.schema.default;
  }
  if (model.pricing.referenceClips) config.referenceClips = model.pricing.referenceClips;
  if (model.pricing.sourceClip) config.sourceClip = model.pricing.sourceClip;
  return config;
}

/** A model's price table: its billing config, how each option is read, its rate rows in spec order. */
export function priceTable(model: Model): PriceTable {
  const options = model.pricing.options.map(
    (o): PriceOption => (o.nonEmpty ? { name: o.name, nonEmpty: o.nonEmpty } : { name: o.name, from: o.from! }),
  );
  const rates = model.pricing.rates.map((r) => ({ when: r.when, rateHundredths: r.rateHundredths, rate: r.rate }));
  return { billing: billingConfig(model), options, rates };
}

/**
 * generated/prices.ts: the template's price function over one table per model. Rates are integer
 * hundredths of a credit, matched first-row-wins; all arithmetic is integer (support.ts computePrice).
 */
export const pricesPlugin: Plugin = {
  name: 'prices',
  dependsOn: ['support'],
  emit: ({ catalogue }) => [
    {
      path: 'prices.ts',
      contents: printModule({
        template: new URL('./template.ts', import.meta.url),
        imports: { '../support/template.js': './support.js' },
        values: { PRICE_TABLES: Object.fromEntries(catalogue.models.map((m) => [m.id, priceTable(m)])) },
      }),
      inputs: allModelInputs(catalogue),
    },
  ],
};
