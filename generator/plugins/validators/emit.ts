import { Ajv } from 'ajv';
import type { Model } from '../../load/types.js';
import { modelIdent, validatorModulePath } from '../../naming.js';
import type { GeneratedFile, Plugin } from '../../plugin.js';
import { ajvStandaloneModule } from '../../print/ajv-standalone.js';
import { Identifier } from '../../print/literal.js';
import { printModule } from '../../print/module.js';
import type { AutoRange } from '../../../catalogue-core/ajv-errors.js';
import { patternKeyword, stringLengthKeywords } from './string-keywords.js';

/**
 * ajv's standalone code for the model's input schema, exporting its function as `schemaValidate`
 * (print/ajv-standalone.ts: ajv prints it, with a require made first where its ESM output needs one).
 */
function schemaModule(model: Model): string {
  // A fresh instance per model keeps each file's identifiers independent of the others (adding a
  // model changes no other file); the schemas are ours, so the meta-schema check is skipped.
  const ajv = new Ajv({
    allErrors: true,
    useDefaults: true,
    strict: true,
    validateSchema: false,
    meta: false,
    addUsedSchema: false,
    code: { source: true, esm: true, optimize: 1 },
  });
  // Replaced in place: a keyword added back goes after the others of its type, so pattern is
  // re-added behind the lengths to keep ajv's order (a 160 KB URL is told its length first).
  ajv.removeKeyword('maxLength');
  ajv.removeKeyword('minLength');
  ajv.removeKeyword('pattern');
  ajv.addKeyword(stringLengthKeywords);
  ajv.addKeyword(patternKeyword);
  ajv.addSchema(model.inputSchema, 'input');
  return ajvStandaloneModule(
    ajv,
    { schemaValidate: 'input' },
    `// JSON Schema of ${model.id}, compiled by ajv at generation time.\n`,
  );
}

function autoRanges(model: Model): Record<string, AutoRange> {
  const out: Record<string, AutoRange> = {};
  for (const field of model.fields) {
    if (field.auto === undefined) continue;
    const range = (field.schema.anyOf as Record<string, number>[])[1];
    out[`#/properties/${field.name}/anyOf`] = { auto: field.auto, min: range.minimum, max: range.maximum };
  }
  return out;
}

/**
 * Per model: ajv's compiled schema (<id>.schema.js, with its declaration) and the validator module
 * (<id>.ts, printed from ./module-template.ts with the model's pattern messages, auto ranges and
 * cross-field rules as data); and the index of every validator by model id.
 */
export const validatorsPlugin: Plugin = {
  name: 'validators',
  dependsOn: ['support'],
  emit: ({ catalogue }) => {
    const files: GeneratedFile[] = [];
    for (const model of catalogue.models) {
      const path = validatorModulePath(model.id);
      const name = model.id.split('/').at(-1);
      const depth = model.id.split('/').length; // validators/<vendor>/<family>/<mode> -> ../../../
      const supportImport = `${'../'.repeat(depth)}support.js`;
      files.push({ path: `${path}.schema.js`, contents: schemaModule(model), inputs: model.sources });
      files.push({
        path: `${path}.schema.d.ts`,
        contents: printModule({
          template: new URL('./schema-template.ts', import.meta.url),
          imports: { '../support/template.js': supportImport },
        }),
        inputs: model.sources,
      });
      files.push({
        path: `${path}.ts`,
        contents: printModule({
          template: new URL('./module-template.ts', import.meta.url),
          imports: { '../support/template.js': supportImport, './schema-template.js': `./${name}.schema.js` },
          values: { PATTERN_MESSAGES: model.patternMessages, AUTO_RANGES: autoRanges(model), RULES: model.rules },
        }),
        inputs: model.sources,
      });
    }
    files.push({
      path: 'validators/index.ts',
      contents: printModule({
        template: new URL('./index-template.ts', import.meta.url),
        imports: { '../support/template.js': '../support.js' },
        addImports: catalogue.models.map((m) => ({
          namedImports: [{ name: 'validateInput', alias: modelIdent(m.id) }],
          moduleSpecifier: `./${m.id}.js`,
        })),
        values: { validators: new Map(catalogue.models.map((m) => [m.id, new Identifier(modelIdent(m.id))])) },
      }),
      inputs: [`spec/models/**/*.yaml (${catalogue.models.length} models)`],
    });
    return files;
  },
};
