import { Ajv } from 'ajv';
import { ts } from 'ts-morph';
import { boundOperations, operations, type Operation, type ParameterIn } from '../../load/operations.js';
import type { JsonSchema } from '../../load/types.js';
import type { Plugin } from '../../plugin.js';
import { ajvStandaloneModule } from '../../print/ajv-standalone.js';
import { Identifier, stringUnion } from '../../print/literal.js';
import { printModule } from '../../print/module.js';
import { requestVectors } from './vectors.js';

/** The parts of a request that are checked, with the suffix of their validator's export name. */
const PARTS: { in: ParameterIn; key: 'query' | 'path' | 'headers'; suffix: string }[] = [
  { in: 'path', key: 'path', suffix: 'Path' },
  { in: 'query', key: 'query', suffix: 'Query' },
  { in: 'header', key: 'headers', suffix: 'Headers' },
];

/** The JSON Schema of one part of an operation's parameters: an object of the declared names (others pass). */
export function partSchema(op: Operation, where: ParameterIn): JsonSchema | undefined {
  const params = op.parameters.filter((p) => p.in === where);
  if (params.length === 0) return undefined;
  const required = params.filter((p) => p.required).map((p) => p.name);
  return {
    type: 'object',
    properties: Object.fromEntries(params.map((p) => [p.name, p.schema])),
    ...(required.length ? { required } : {}),
  };
}

/**
 * generated/requests/: every operation's path, query and header parameters and its JSON body
 * compiled by ajv into standalone validators (validators.js, one named export per part through
 * standaloneCode's export map), their declarations (validators.d.ts), the table the HTTP layer
 * reads (index.ts: which validator, which parameters are integers, which business code a bad value
 * answers with) and one request with a bad value per operation and kind of parameter (vectors.json);
 * generated/console/requests/ the same for the console's operations (no vectors: they need a session).
 */
export const requestsPlugin: Plugin = {
  name: 'requests',
  dependsOn: ['openapi', 'routes'],
  emit: ({ emitted, catalogue }) => {
    const doc = JSON.parse(emitted.get('openapi.json')!.contents) as JsonSchema;
    const consoleDoc = JSON.parse(emitted.get('console/openapi.json')!.contents) as JsonSchema;
    const envelopes = envelopeSchemas(catalogue.openapiBase);
    return [
      ...requestFiles(boundOperations(doc), 'requests', '../errors.js', ['generated/openapi.json'], envelopes),
      {
        path: 'requests/vectors.json',
        contents: `${JSON.stringify({ cases: requestVectors(boundOperations(doc)) }, null, 2)}\n`,
        inputs: ['generated/openapi.json'],
      },
      // The console's operations (generated/console/routes.ts), checked by the same binder; an
      // operation bound by its own scope (x-bound-by: the payments webhook) has no rules here.
      ...requestFiles(boundOperations(consoleDoc), 'console/requests', '../../errors.js', [
        'generated/console/openapi.json',
      ]),
    ];
  },
};

/**
 * The envelope of each body that names a model, in the base contract: createTask's and quoteTask's
 * (`input` an opaque object, ModelInput; the published document replaces them by a oneOf on
 * `model`) and createVideo's JSON body (its compat fields; the model's own fields beside them pass,
 * `additionalProperties: true`), which also checks its multipart form once read into fields. The
 * envelope is what is checked before the model is looked up; the model's validator checks the rest.
 */
export function envelopeSchemas(base: JsonSchema): Map<string, JsonSchema> {
  const out = new Map<string, JsonSchema>();
  for (const op of operations(base))
    if (op.bodyKind !== 'raw' && op.body?.schema && !('discriminator' in op.body.schema))
      out.set(op.operationId, op.body.schema);
  return out;
}

/** The JSON schema a body is checked against (before its handler; a multipart form's by its handler), if any. */
function checkedBody(op: Operation, envelopes: Map<string, JsonSchema>): JsonSchema | undefined {
  if (!op.body?.schema) return undefined;
  if (op.body.checkedBy === 'contract') return op.body.schema;
  if (op.body.checkedBy === 'catalogue') return envelopes.get(op.operationId);
  return undefined;
}

/** A message of spec/errors.yaml with its placeholders, some of them messages themselves (`condition`). */
export interface IssueMessage {
  key: string;
  params: Record<string, string | IssueMessage>;
}

/** How a body problem is reported where the contract says otherwise (`x-issue`), by the schema path it is under. */
export interface IssueOverride {
  rule: string;
  key: string;
  params: Record<string, string | IssueMessage>;
}

/** The subschemas of a schema that describe the same value, by the keyword ajv names in a schema path. */
const SAME_VALUE = ['if', 'then', 'else', 'not'] as const;
const SAME_VALUE_LISTS = ['allOf', 'anyOf', 'oneOf'] as const;

/**
 * The `x-issue` extensions of a body schema and its subschemas (properties, nested ones, and the
 * allOf/anyOf/oneOf/if/then/else/not branches), by ajv schema path (`#/properties/model`): every
 * problem ajv reports under that path answers with the rule, message key and params given
 * (`expectedCredits: -1` is `quote_expected`, not `minimum`; createVideo's `input_reference` with
 * both keys is `rule_forbidden_when`, not ajv's `not`).
 */
export function issueOverrides(schema: JsonSchema, at = '#'): Record<string, IssueOverride> {
  const out: Record<string, IssueOverride> = {};
  const issue = schema['x-issue'] as { rule: string; message: string; params?: IssueOverride['params'] } | undefined;
  if (issue) out[at] = { rule: issue.rule, key: issue.message, params: issue.params ?? {} };
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  for (const [name, property] of Object.entries(properties))
    Object.assign(out, issueOverrides(property, `${at}/properties/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`));
  for (const keyword of SAME_VALUE) {
    const branch = schema[keyword];
    if (typeof branch === 'object' && branch !== null)
      Object.assign(out, issueOverrides(branch as JsonSchema, `${at}/${keyword}`));
  }
  for (const keyword of SAME_VALUE_LISTS)
    for (const [index, branch] of ((schema[keyword] as JsonSchema[] | undefined) ?? []).entries())
      Object.assign(out, issueOverrides(branch, `${at}/${keyword}/${index}`));
  return out;
}

/** The validators, their declarations and the rules table of one document's operations, under `dir`. */
function requestFiles(
  ops: Operation[],
  dir: string,
  errorsModule: string,
  inputs: string[],
  envelopes = new Map<string, JsonSchema>(),
) {
  // Defaults fill absent parameters (limit 20); every problem is listed (a body's 40001 names each).
  const ajv = new Ajv({
    allErrors: true,
    useDefaults: true,
    strict: true,
    strictTypes: false,
    validateSchema: false,
    addUsedSchema: false,
    code: { source: true, esm: true, optimize: 1 },
  });
  // `format: date` is checked by the pattern beside it in the contract: ajv-formats is a build-time
  // package only, and the generated code must not require it in production.
  ajv.addFormat('date', true);
  // The console's components carry the marker that keeps them out of the public document.
  ajv.addKeyword('x-internal');
  // How a property's problems are reported (read into the rules table below, not by ajv).
  ajv.addKeyword('x-issue');
  const exportsMap: Record<string, string> = {};
  const bodies = new Map<string, JsonSchema>();
  for (const op of ops) {
    for (const part of PARTS) {
      const schema = partSchema(op, part.in);
      if (!schema) continue;
      ajv.addSchema(schema, `${op.operationId}${part.suffix}`);
      exportsMap[`${op.operationId}${part.suffix}`] = `${op.operationId}${part.suffix}`;
    }
    const body = checkedBody(op, envelopes);
    if (body) {
      ajv.addSchema(body, `${op.operationId}Body`);
      bodies.set(op.operationId, body);
      exportsMap[`${op.operationId}Body`] = `${op.operationId}Body`;
    }
  }
  return [
    { path: `${dir}/validators.js`, contents: ajvStandaloneModule(ajv, exportsMap), inputs },
    { path: `${dir}/validators.d.ts`, contents: declarations(Object.keys(exportsMap)), inputs },
    { path: `${dir}/index.ts`, contents: table(ops, new Set(Object.keys(exportsMap)), bodies, errorsModule), inputs },
  ];
}

const f = ts.factory;

/** validators.d.ts: the template's interfaces and `export declare const <name>: RequestValidator;` per validator. */
function declarations(names: string[]): string {
  return printModule({
    template: new URL('./validators-template.ts', import.meta.url),
    addStatements: names.map((name) =>
      f.createVariableStatement(
        [f.createModifier(ts.SyntaxKind.ExportKeyword), f.createModifier(ts.SyntaxKind.DeclareKeyword)],
        f.createVariableDeclarationList(
          [f.createVariableDeclaration(name, undefined, f.createTypeReferenceNode('RequestValidator'))],
          ts.NodeFlags.Const,
        ),
      ),
    ),
  });
}

/** index.ts: the template's types and each operation's request rules, naming its validators. */
function table(ops: Operation[], compiled: Set<string>, bodies: Map<string, JsonSchema>, errorsModule: string): string {
  const rules: Record<string, Record<string, unknown>> = {};
  for (const op of ops) {
    const rule: Record<string, unknown> = {
      parameters: op.parameters.map((p) => ({
        name: p.name,
        in: p.in,
        integer: p.schema.type === 'integer',
        error: p.error,
      })),
    };
    for (const part of PARTS)
      if (compiled.has(`${op.operationId}${part.suffix}`))
        rule[part.key] = new Identifier(`validators.${op.operationId}${part.suffix}`);
    if (compiled.has(`${op.operationId}Body`)) {
      const issues = issueOverrides(bodies.get(op.operationId)!);
      rule.body = {
        validate: new Identifier(`validators.${op.operationId}Body`),
        required: op.body!.required,
        error: op.body!.error,
        ...(Object.keys(issues).length ? { issues } : {}),
        // An envelope lists its problems field by field, as the model's validator lists input's.
        ...(op.body!.checkedBy === 'catalogue'
          ? { order: Object.keys(bodies.get(op.operationId)!.properties ?? {}) }
          : {}),
      };
    }
    rules[op.operationId] = rule;
  }
  const defaulted = ops
    .map((op) => ({
      id: op.operationId,
      names: op.parameters.filter((p) => p.in === 'query' && p.schema.default !== undefined).map((p) => p.name),
    }))
    .filter(({ names }) => names.length > 0);
  return printModule({
    template: new URL('./template.ts', import.meta.url),
    imports: {
      '../errors/template.js': errorsModule,
      '../routes/template.js': '../routes.js',
      './validators-template.js': './validators.js',
    },
    addImports: [{ namespaceImport: 'validators', moduleSpecifier: './validators.js' }],
    values: { requestRules: rules },
    types: {
      DefaultedQuery: f.createTypeLiteralNode(
        defaulted.map(({ id, names }) => f.createPropertySignature(undefined, id, undefined, stringUnion(names))),
      ),
    },
  });
}
