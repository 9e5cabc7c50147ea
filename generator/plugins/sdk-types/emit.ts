import openapiTS, { astToString } from 'openapi-typescript';
import type { Plugin } from '../../plugin.js';

/** generated/sdk/types.ts: openapi-typescript's types of the merged document (input typed per model). */
export const sdkTypesPlugin: Plugin = {
  name: 'sdk-types',
  dependsOn: ['openapi'],
  emit: async ({ emitted }) => {
    const merged = emitted.get('openapi.json')!;
    const ast = await openapiTS(JSON.parse(merged.contents), { alphabetize: true, exportType: false });
    return [{ path: 'sdk/types.ts', contents: astToString(ast), inputs: ['generated/openapi.json'] }];
  },
};
