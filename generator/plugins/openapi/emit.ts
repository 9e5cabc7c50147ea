import { dump } from 'js-yaml';
import type { JsonSchema } from '../../load/types.js';
import type { Plugin } from '../../plugin.js';
import { allModelInputs } from '../../plugin.js';
import { createRequestSchemaName, inputSchemaName } from '../../naming.js';
import { internalDocument, publicDocument } from './internal.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/**
 * The merged OpenAPI document: the hand-written base contract (spec/openapi.yaml) plus one input
 * schema per model, with the create and quote body as a oneOf discriminated on `model`. Its
 * internal part (the console's API) is split off before writing (internal.ts).
 */
export function mergeOpenApi(
  base: JsonSchema,
  models: { id: string; title: string; summary: string; inputSchema: JsonSchema }[],
): JsonSchema {
  const doc = structuredClone(base) as { components: { schemas: Record<string, JsonSchema> } } & JsonSchema;
  const schemas = doc.components.schemas;
  const common = structuredClone(schemas.CreateTaskRequest) as {
    properties: Record<string, JsonSchema>;
    required: string[];
    description?: string;
  };
  delete schemas.ModelInput;
  const variants: JsonSchema[] = [];
  const mapping: Record<string, string> = {};
  for (const model of models) {
    const inputName = inputSchemaName(model.id);
    const requestName = createRequestSchemaName(model.id);
    schemas[inputName] = { title: model.title, description: model.summary, ...model.inputSchema };
    schemas[requestName] = {
      type: 'object',
      description: `Create or quote a task on ${model.id}.`,
      required: common.required,
      additionalProperties: false,
      properties: {
        ...common.properties,
        model: { type: 'string', const: model.id, description: common.properties.model.description },
        input: ref(inputName),
      },
    };
    variants.push(ref(requestName));
    mapping[model.id] = ref(requestName).$ref;
  }
  schemas.CreateTaskRequest = {
    description: common.description,
    oneOf: variants,
    discriminator: { propertyName: 'model', mapping },
  };
  return doc;
}

export const openapiPlugin: Plugin = {
  name: 'openapi',
  emit: ({ catalogue }) => {
    const merged = mergeOpenApi(catalogue.openapiBase, catalogue.models);
    const doc = publicDocument(merged);
    const inputs = ['spec/openapi.yaml', ...allModelInputs(catalogue)];
    return [
      { path: 'openapi.json', contents: JSON.stringify(doc, null, 2), inputs },
      { path: 'openapi.yaml', contents: dump(doc, { lineWidth: -1, noRefs: true }), inputs },
      // The console's own API (x-internal): its pages' types are generated from it (console-types).
      { path: 'console/openapi.json', contents: JSON.stringify(internalDocument(merged), null, 2), inputs },
    ];
  },
};
