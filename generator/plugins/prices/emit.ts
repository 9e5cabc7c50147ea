import type { Model } from '../../load/types.js';
import { allModelInputs, type Plugin } from '../../plugin.js';
import { modelIdent } from '../validators/emit.js';

const lit = (value: unknown) => JSON.stringify(value);

/** The pricing config a model's price function passes to computePrice. */
export function billingConfig(model: Model): Record<string, unknown> {
  const duration = model.fields.find((f) => f.name === 'duration_seconds');
  const config: Record<string, unknown> = {};
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

/** Expression reading one pricing option from the normalized input `v`. */
function optionExpression(model: Model, name: string): string {
  const option = model.pricing.options.find((o) => o.name === name)!;
  return option.nonEmpty ? `given(v[${lit(option.nonEmpty)}])` : `v[${lit(option.from)}]`;
}

function emitPriceFunction(model: Model): string {
  const ident = modelIdent(model.id);
  const options = model.pricing.options.map((o) => `${lit(o.name)}: ${optionExpression(model, o.name)}`).join(', ');
  const rows = model.pricing.rates.map((r) => {
    const test = Object.entries(r.when).map(([k, value]) => `o[${lit(k)}] === ${lit(value)}`);
    return `  ${test.length ? `if (${test.join(' && ')}) ` : ''}return [${r.rateHundredths}, ${lit(r.rate)}];`;
  });
  return [
    `const billing_${ident} = ${lit(billingConfig(model))};`,
    `function rate_${ident}(o) {`,
    ...rows,
    `  throw new Error("no rate row matches");`,
    `}`,
    `function price_${ident}(v, facts = {}) {`,
    `  const o = { ${options} };`,
    `  return computePrice(v, facts, billing_${ident}, rate_${ident}(o), o);`,
    `}`,
  ].join('\n');
}

/**
 * generated/prices.ts: one price function per model. Rates are integer hundredths of a credit,
 * matched first-row-wins; all arithmetic is integer (support.ts computePrice).
 */
export const pricesPlugin: Plugin = {
  name: 'prices',
  dependsOn: ['support'],
  emit: ({ catalogue }) => [
    {
      path: 'prices.ts',
      contents: [
        '// @ts-nocheck -- plain generated dispatch; the exported map is typed below.',
        `import { computePrice, given, type PriceFacts, type PriceResult } from './support.js';`,
        '',
        ...catalogue.models.map(emitPriceFunction),
        '',
        '/** Price of a normalized input (from validateInput), by model id. */',
        'export const prices: ReadonlyMap<string, (input: Record<string, unknown>, facts?: PriceFacts) => PriceResult> = new Map([',
        ...catalogue.models.map((m) => `  [${lit(m.id)}, price_${modelIdent(m.id)}],`),
        ']);',
        '',
      ].join('\n'),
      inputs: allModelInputs(catalogue),
    },
  ],
};
