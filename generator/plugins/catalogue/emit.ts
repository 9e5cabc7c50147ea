import { allModelInputs, type Plugin } from '../../plugin.js';
import { printModule } from '../../print/module.js';
import { modelInfo } from './model-info.js';

/**
 * generated/model-info.ts: every model's public info (GET /models; code: ./model-info-template.ts),
 * and generated/catalogue.ts: the one registry the runtime asks about a model: that info, its
 * validator, its price function and its marker checker (code: ./template.ts). The info stands
 * alone so that what needs only it (the service's settings, the console commands) loads no validator.
 */
export const cataloguePlugin: Plugin = {
  name: 'catalogue',
  dependsOn: ['validators', 'prices', 'markers'],
  emit: ({ catalogue }) => [
    {
      path: 'model-info.ts',
      contents: printModule({
        template: new URL('./model-info-template.ts', import.meta.url),
        values: { MODEL_INFO: catalogue.models.map(modelInfo) },
      }),
      inputs: allModelInputs(catalogue),
    },
    {
      path: 'catalogue.ts',
      contents: printModule({
        template: new URL('./template.ts', import.meta.url),
        imports: {
          '../markers/template.js': './markers.js',
          '../prices/template.js': './prices.js',
          '../support/template.js': './support.js',
          '../validators/index-template.js': './validators/index.js',
          './model-info-template.js': './model-info.js',
        },
      }),
      inputs: allModelInputs(catalogue),
    },
  ],
};
