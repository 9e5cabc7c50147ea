import {
  astToString,
  resolveRef,
  scanDiscriminators,
  transformSchema,
  type OpenAPI3,
  type OpenAPITSOptions,
} from 'openapi-typescript';
import type { Plugin } from '../../plugin.js';

const OPTIONS: OpenAPITSOptions = { alphabetize: true, exportType: false, silent: true };

/**
 * openapi-typescript's transform of the merged document. `openapiTS()` would first lint and bundle
 * it with Redocly; the document has only internal $refs (bundling changes nothing) and the test
 * suite lints it with the full recommended ruleset, so the transform is called directly: the same
 * output, without two walks whose cost grows with every model.
 */
export function sdkTypes(doc: OpenAPI3): string {
  const ctx = {
    additionalProperties: false,
    alphabetize: true,
    arrayLength: false,
    // A field with a default may be left out by the caller: optional, not required.
    defaultNonNullable: false,
    discriminators: scanDiscriminators(doc, OPTIONS),
    emptyObjectsUnknown: false,
    enum: false,
    enumValues: false,
    conditionalEnums: false,
    dedupeEnums: false,
    excludeDeprecated: false,
    exportType: false,
    immutable: false,
    rootTypes: false,
    rootTypesNoSchemaPrefix: false,
    rootTypesKeepCasing: false,
    injectFooter: [],
    pathParamsAsTypes: false,
    postTransform: undefined,
    propertiesRequiredByDefault: false,
    redoc: undefined,
    silent: true,
    inject: undefined,
    transform: undefined,
    transformProperty: undefined,
    makePathsEnum: false,
    generatePathParams: false,
    readWriteMarkers: false,
    resolve: ($ref: string) => resolveRef(doc, $ref, { silent: true }),
  } as unknown as Parameters<typeof transformSchema>[1];
  return astToString(transformSchema(doc, ctx));
}

/** generated/sdk/types.ts: openapi-typescript's types of the merged document (input typed per model). */
export const sdkTypesPlugin: Plugin = {
  name: 'sdk-types',
  dependsOn: ['openapi'],
  emit: ({ emitted }) => [
    {
      path: 'sdk/types.ts',
      contents: sdkTypes(JSON.parse(emitted.get('openapi.json')!.contents)),
      inputs: ['generated/openapi.json'],
    },
  ],
};
