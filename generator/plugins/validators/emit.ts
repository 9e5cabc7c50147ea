import { Ajv } from 'ajv';
import standaloneModule from 'ajv/dist/standalone/index.js';

type StandaloneCode = (ajv: Ajv, validate: unknown) => string;
// ajv ships CommonJS: depending on the loader the default import is the function or the module object.
const standaloneCode: StandaloneCode =
  typeof standaloneModule === 'function' ? (standaloneModule as StandaloneCode) : (standaloneModule as unknown as { default: StandaloneCode }).default;
import type { Model } from '../../load/types.js';
import type { GeneratedFile, Plugin } from '../../plugin.js';
import { emitRules } from './rules.js';

export const modelIdent = (id: string) => id.replace(/[^A-Za-z0-9]/g, '_');

/**
 * One validator module per model: ajv standalone code compiled here (the runtime never compiles
 * a schema), the model's cross-field rules, and `validateInput` returning the normalized input
 * (defaults applied) or every field problem.
 */
export const validatorsPlugin: Plugin = {
  name: 'validators',
  dependsOn: ['support'],
  emit: ({ catalogue }) => {
    const files: GeneratedFile[] = [];
    for (const model of catalogue.models) {
      const path = `validators/${model.id}`;
      const depth = model.id.split('/').length; // validators/<vendor>/<family>/<mode>.js -> ../../../
      const supportImport = `${'../'.repeat(depth)}support.js`;
      files.push({ path: `${path}.js`, contents: emitValidatorModule(model, supportImport), inputs: model.sources });
      files.push({
        path: `${path}.d.ts`,
        contents: `import type { ValidationResult } from '${supportImport}';\nexport declare function validateInput(input: unknown): ValidationResult;\n`,
        inputs: model.sources,
      });
    }
    const imports = catalogue.models.map((m) => `import { validateInput as ${modelIdent(m.id)} } from './${m.id}.js';`);
    const entries = catalogue.models.map((m) => `  [${JSON.stringify(m.id)}, ${modelIdent(m.id)}],`);
    files.push({
      path: 'validators/index.ts',
      contents: [
        `import type { ValidationResult } from '../support.js';`,
        ...imports,
        '',
        '/** The generated validator of every model, by model id. */',
        'export const validators: ReadonlyMap<string, (input: unknown) => ValidationResult> = new Map([',
        ...entries,
        ']);',
        '',
      ].join('\n'),
      inputs: [`spec/models/**/*.yaml (${catalogue.models.length} models)`],
    });
    return files;
  },
};

function emitValidatorModule(model: Model, supportImport: string): string {
  // A fresh instance per model keeps each file's identifiers independent of the others (adding a
  // model changes no other file); the schemas are ours, so the meta-schema check is skipped.
  const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: true, validateSchema: false, meta: false, addUsedSchema: false, code: { source: true, esm: true, optimize: 1 } });
  const validate = ajv.compile(model.inputSchema);
  let schemaCode = standaloneCode(ajv, validate).replace(/^"use strict";/, '');
  // ajv's ESM output still calls require() for its runtime helpers (ajv issue #2209).
  const needsRequire = schemaCode.includes('require(');
  schemaCode = schemaCode.replace(/export const validate = (\w+);/, 'const schemaValidate = $1;').replace(/export default \w+;/, '');
  const autoRanges: Record<string, { auto: number; min?: number; max?: number }> = {};
  for (const field of model.fields) {
    if (field.auto === undefined) continue;
    const range = (field.schema.anyOf as Record<string, number>[])[1];
    autoRanges[`#/properties/${field.name}/anyOf`] = { auto: field.auto, min: range.minimum, max: range.maximum };
  }
  return [
    needsRequire ? `import { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);` : '',
    `import { cloneJson, countItems, given, mapAjvErrors } from '${supportImport}';`,
    '',
    `// JSON Schema of ${model.id}, compiled by ajv at generation time.`,
    schemaCode.trim(),
    '',
    `const PATTERN_MESSAGES = ${JSON.stringify(model.patternMessages)};`,
    `const AUTO_RANGES = ${JSON.stringify(autoRanges)};`,
    '',
    '/** Cross-field rules of the model (spec rules:), on an input that passed the schema. */',
    'function checkRules(v) {',
    '  const errors = [];',
    emitRules(model),
    '  return errors;',
    '}',
    '',
    '/** Validates a request input; on success returns it with the defaults filled in. */',
    'export function validateInput(input) {',
    '  if (typeof input !== "object" || input === null || Array.isArray(input)) {',
    '    return { ok: false, errors: [{ path: "input", rule: "type", message: { key: "type", params: { field: "input", type: "object" } } }] };',
    '  }',
    '  const value = cloneJson(input);',
    '  if (!schemaValidate(value)) return { ok: false, errors: mapAjvErrors(schemaValidate.errors, PATTERN_MESSAGES, AUTO_RANGES) };',
    '  const errors = checkRules(value);',
    '  return errors.length > 0 ? { ok: false, errors } : { ok: true, value };',
    '}',
    '',
  ]
    .filter((line, i) => line !== '' || i > 0)
    .join('\n');
}
