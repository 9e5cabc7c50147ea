import type { Plugin } from '../../plugin.js';
import { printModule } from '../../print/module.js';

/** The modules of catalogue-core/ that generated/support.ts re-exports, as the template names them. */
const LIBRARY = [
  'issues',
  'ajv-errors',
  'json-values',
  'rules',
  'money',
  'price',
  'markers',
  'model-patterns',
  'price-book',
];

/**
 * generated/support.ts: the re-exports of catalogue-core/ (the rules, prices and money every
 * generated module uses), printed from ./template.ts with each specifier made relative to generated/.
 */
export const supportPlugin: Plugin = {
  name: 'support',
  emit: () => [
    {
      path: 'support.ts',
      contents: printModule({
        template: new URL('./template.ts', import.meta.url),
        imports: Object.fromEntries(
          LIBRARY.map((name) => [`../../../catalogue-core/${name}.js`, `../catalogue-core/${name}.js`]),
        ),
      }),
      inputs: ['generator/plugins/support/template.ts', 'catalogue-core/*.ts'],
    },
  ],
};
