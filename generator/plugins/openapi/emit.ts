import { dump } from 'js-yaml';
import type { JsonSchema } from '../../load/types.js';
import type { Plugin } from '../../plugin.js';
import { allModelInputs } from '../../plugin.js';
import { modelIdent } from '../validators/emit.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/**
 * The merged OpenAPI document: the hand-written base contract (spec/openapi.yaml) plus one input
 * schema per model, with the create and quote body as a oneOf discriminated on `model`.
 */
export function mergeOpenApi(base: JsonSchema, models: { id: string; title: string; summary: string; inputSchema: JsonSchema }[]): JsonSchema {
  const doc = structuredClone(base) as { components: { schemas: Record<string, JsonSchema> } } & JsonSchema;
  const schemas = doc.components.schemas;
  const common = structuredClone(schemas.CreateTaskRequest) as { properties: Record<string, JsonSchema>; required: string[]; description?: string };
  delete schemas.ModelInput;
  const variants: JsonSchema[] = [];
  const mapping: Record<string, string> = {};
  for (const model of models) {
    const ident = modelIdent(model.id);
    schemas[`Input_${ident}`] = { title: model.title, description: model.summary, ...model.inputSchema };
    schemas[`CreateTaskRequest_${ident}`] = {
      type: 'object',
      description: `Create or quote a task on ${model.id}.`,
      required: common.required,
      additionalProperties: false,
      properties: {
        ...common.properties,
        model: { type: 'string', const: model.id, description: common.properties.model.description },
        input: ref(`Input_${ident}`),
      },
    };
    variants.push(ref(`CreateTaskRequest_${ident}`));
    mapping[model.id] = `#/components/schemas/CreateTaskRequest_${ident}`;
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
    const doc = mergeOpenApi(catalogue.openapiBase, catalogue.models);
    const inputs = ['spec/openapi.yaml', ...allModelInputs(catalogue)];
    return [
      { path: 'openapi.json', contents: JSON.stringify(doc, null, 2), inputs },
      { path: 'openapi.yaml', contents: dump(doc, { lineWidth: -1, noRefs: true }), inputs },
    ];
  },
};
