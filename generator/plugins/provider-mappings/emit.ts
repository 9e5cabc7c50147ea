import { PROVIDER_PROTOCOLS } from '../../load/providers.js';
import { allModelInputs, type Plugin } from '../../plugin.js';
import { printModule } from '../../print/module.js';

/**
 * generated/provider-mappings.ts: how each upstream protocol names the catalogue's fields
 * (spec/providers/*.yaml, checked against every model by the loader). The adapters ask
 * `providerMapping(protocol, modelId)` and apply it (runtime/upstreams/map-input.ts) without
 * knowing any model.
 */
export const providerMappingsPlugin: Plugin = {
  name: 'provider-mappings',
  emit: ({ catalogue }) => {
    const table = Object.fromEntries(
      catalogue.providers.map((p) => [
        p.protocol,
        {
          fields: p.fields,
          otherFields: p.otherFields,
          set: p.set,
          ...(p.result ? { result: p.result } : {}),
          ...(p.references === 'original' ? { references: p.references } : {}),
          models: p.models,
          unmapped: p.unmapped,
          unsupported: p.unsupported,
          notServed: p.notServed,
        },
      ]),
    );
    return [
      {
        path: 'provider-mappings.ts',
        inputs: [...catalogue.providers.map((p) => p.file), ...allModelInputs(catalogue)],
        contents: printModule({
          template: new URL('./template.ts', import.meta.url),
          values: { PROVIDER_PROTOCOLS, TABLE: table },
        }),
      },
    ];
  },
};
