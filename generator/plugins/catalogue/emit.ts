import { allModelInputs, type Plugin } from '../../plugin.js';
import { modelInfo } from './model-info.js';

/**
 * generated/catalogue.ts: the one registry the runtime asks about a model: its public info
 * (GET /models), its validator, its price function and its marker checker.
 */
export const cataloguePlugin: Plugin = {
  name: 'catalogue',
  dependsOn: ['validators', 'prices', 'markers'],
  emit: ({ catalogue }) => [
    {
      path: 'catalogue.ts',
      contents: [
        `import { checkMarkers } from './markers.js';`,
        `import { prices } from './prices.js';`,
        `import type { PriceFacts, PriceResult, ValidationResult, Warning } from './support.js';`,
        `import { validators } from './validators/index.js';`,
        '',
        `const INFO = ${JSON.stringify(catalogue.models.map(modelInfo), null, 2)};`,
        '',
        'export type ModelInfo = (typeof INFO)[number];',
        '',
        'export interface CatalogueModel {',
        '  info: ModelInfo;',
        '  /** Checks an input against the model\'s published limits; returns it normalized (defaults filled in). */',
        '  validate(input: unknown): ValidationResult;',
        '  /** Prices a normalized input; facts (measured lengths) refine it at settlement. */',
        '  price(input: Record<string, unknown>, facts?: PriceFacts): PriceResult;',
        '  /** Prompt-marker warnings for a normalized input. */',
        '  warnings(input: Record<string, unknown>): Warning[];',
        '}',
        '',
        '/** Every callable model, by id, in id order. */',
        'export const catalogue: ReadonlyMap<string, CatalogueModel> = new Map(',
        '  INFO.map((info) => [',
        '    info.id,',
        '    {',
        '      info,',
        '      validate: validators.get(info.id)!,',
        '      price: prices.get(info.id)!,',
        '      warnings: (input: Record<string, unknown>) => checkMarkers(info.markerStyle, input, info.referenceFields as [string, string][]),',
        '    },',
        '  ]),',
        ');',
        '',
      ].join('\n'),
      inputs: allModelInputs(catalogue),
    },
  ],
};
