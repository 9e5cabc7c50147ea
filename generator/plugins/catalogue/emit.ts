import { allModelInputs, type Plugin } from '../../plugin.js';
import { printModule } from '../../print/module.js';
import { modelInfo } from './model-info.js';

/**
 * generated/catalogue.ts: the one registry the runtime asks about a model: its public info
 * (GET /models), its validator, its price function and its marker checker (code: ./template.ts).
 */
export const cataloguePlugin: Plugin = {
  name: 'catalogue',
  dependsOn: ['validators', 'prices', 'markers'],
  emit: ({ catalogue }) => [
    {
      path: 'catalogue.ts',
      contents: printModule({
        template: new URL('./template.ts', import.meta.url),
        imports: {
          '../markers/template.js': './markers.js',
          '../prices/template.js': './prices.js',
          '../support/template.js': './support.js',
          '../validators/index-template.js': './validators/index.js',
        },
        values: { INFO: catalogue.models.map(modelInfo) },
      }),
      inputs: allModelInputs(catalogue),
    },
  ],
};
