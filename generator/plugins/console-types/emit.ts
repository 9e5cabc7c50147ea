import type { OpenAPI3 } from 'openapi-typescript';
import type { Plugin } from '../../plugin.js';
import { sdkTypes } from '../sdk-types/emit.js';

/**
 * generated/console/types.ts: openapi-typescript's types of the console's internal API
 * (generated/console/openapi.json), which the console and playground pages call through
 * (runtime/console/web/api.ts); kept apart from the public SDK types.
 */
export const consoleTypesPlugin: Plugin = {
  name: 'console-types',
  dependsOn: ['openapi'],
  emit: ({ emitted }) => [
    {
      path: 'console/types.ts',
      contents: sdkTypes(JSON.parse(emitted.get('console/openapi.json')!.contents) as OpenAPI3),
      inputs: ['generated/console/openapi.json'],
    },
  ],
};
