import type { JsonSchema } from './types.js';

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

/** Where a parameter travels. */
export type ParameterIn = 'query' | 'path' | 'header';

/** How an operation's body is read: JSON (also for operations without a body), raw bytes, or multipart/form-data (which also takes JSON). */
export type BodyKind = 'json' | 'raw' | 'multipart';

/** Which error shape an operation answers in: the {code, msg, data} envelope or the compatible (OpenAI-style) error object. */
export type Layer = 'envelope' | 'compatible';

export interface OperationParameter {
  name: string;
  in: ParameterIn;
  required: boolean;
  /** The parameter's schema with every $ref resolved. */
  schema: JsonSchema;
  /** The business code a bad value answers with: the parameter's `x-error`, else the operation's `x-parameter-error`, else invalid_parameter. */
  error: string;
  /** `x-spans-segments`: a path parameter whose value may hold unencoded slashes. */
  spansSegments: boolean;
}

export interface OperationBody {
  required: boolean;
  /** The JSON schema of the body with every $ref resolved (json and multipart kinds). */
  schema?: JsonSchema;
  /**
   * `contract`: checked against `schema` before the handler runs. `catalogue`: the body names a
   * model (a oneOf discriminated on it, or the compatible layer's fields mapped onto the model's
   * input) and the model's generated validator checks it, with its own field paths.
   */
  checkedBy: 'contract' | 'catalogue' | 'none';
  /** The business code a bad body answers with: the requestBody's `x-error`, else invalid_input (one entry per problem). */
  error: string;
}

/** One operation of the merged OpenAPI document, as the request side needs it. */
export interface Operation {
  operationId: string;
  method: string;
  path: string;
  summary: string;
  auth: boolean;
  /** `operator`: the security is `operatorSession` (a console session whose user has the operator role). */
  role?: 'operator';
  layer: Layer;
  bodyKind: BodyKind;
  parameters: OperationParameter[];
  body?: OperationBody;
  /**
   * `x-bound-by`: the module that binds this operation in a Fastify scope of its own (the payment
   * processor's webhook: a raw-body parser, because the signature covers the exact bytes, and its own
   * body limit). The contract describes it; the route table and its request rules leave it out, so
   * nothing is bound twice.
   */
  boundBy?: string;
}

type Raw = Record<string, unknown>;

/** Every operation of the merged document, in path then method order. */
export function operations(doc: JsonSchema): Operation[] {
  const paths = doc.paths as Record<string, Raw>;
  const out: Operation[] = [];
  for (const path of Object.keys(paths).sort()) {
    const item = paths[path];
    for (const method of METHODS) {
      const op = item[method] as Raw | undefined;
      if (!op) continue;
      const layer = (op['x-layer'] ?? 'envelope') as Layer;
      if (layer !== 'envelope' && layer !== 'compatible')
        throw new Error(`${method.toUpperCase()} ${path}: x-layer must be envelope or compatible`);
      const defaultError = (op['x-parameter-error'] as string | undefined) ?? 'invalid_parameter';
      const declared = [
        ...((item.parameters as Raw[] | undefined) ?? []),
        ...((op.parameters as Raw[] | undefined) ?? []),
      ].map((p) => resolve(doc, p) as Raw);
      const parameters = declared
        .filter((p) => p.in === 'query' || p.in === 'path' || p.in === 'header')
        .map((p) => ({
          name: p.name as string,
          in: p.in as ParameterIn,
          required: p.required === true,
          schema: deref(doc, p.schema ?? {}) as JsonSchema,
          error: (p['x-error'] as string | undefined) ?? defaultError,
          spansSegments: p['x-spans-segments'] === true,
        }));
      const requestBody = op.requestBody ? (resolve(doc, op.requestBody as Raw) as Raw) : undefined;
      const content = (requestBody?.content ?? {}) as Record<string, { schema?: JsonSchema }>;
      const bodyKind: BodyKind = content['multipart/form-data']
        ? 'multipart'
        : content['application/octet-stream']
          ? 'raw'
          : 'json';
      let body: OperationBody | undefined;
      if (requestBody) {
        const json = content['application/json']?.schema;
        const schema = json ? (deref(doc, json) as JsonSchema) : undefined;
        const checkedBy =
          bodyKind !== 'json'
            ? bodyKind === 'multipart'
              ? 'catalogue'
              : 'none'
            : schema && 'discriminator' in schema
              ? 'catalogue'
              : 'contract';
        body = {
          required: requestBody.required === true,
          schema,
          checkedBy,
          error: (requestBody['x-error'] as string | undefined) ?? 'invalid_input',
        };
      }
      const boundBy = op['x-bound-by'];
      if (boundBy !== undefined && (typeof boundBy !== 'string' || !BOUND_BY.test(boundBy)))
        throw new Error(
          `${method.toUpperCase()} ${path}: x-bound-by must name the module that binds it (runtime/http/routes/<name>.ts)`,
        );
      out.push({
        operationId: op.operationId as string,
        method: method.toUpperCase(),
        path,
        summary: (op.summary as string | undefined) ?? '',
        // `security: []` marks the operations reached by a signed link instead of a key.
        auth: !(Array.isArray(op.security) && op.security.length === 0),
        ...(Array.isArray(op.security) && op.security.some((s) => 'operatorSession' in (s as Raw))
          ? { role: 'operator' as const }
          : {}),
        layer,
        bodyKind,
        parameters,
        body,
        ...(boundBy ? { boundBy } : {}),
      });
    }
  }
  return out;
}

/** The operations the generated route table binds: all but those an own scope binds (`x-bound-by`). */
export function boundOperations(doc: JsonSchema): Operation[] {
  return operations(doc).filter((op) => op.boundBy === undefined);
}

/** What `x-bound-by` may name: a handler module (handlers live under runtime/http/routes/, edge-fitness). */
const BOUND_BY = /^runtime\/http\/routes\/[a-z0-9-]+\.ts$/;

/** The object a `$ref` points at (one level). */
function resolve(doc: JsonSchema, value: Raw): unknown {
  if (typeof value.$ref !== 'string') return value;
  return (value.$ref as string)
    .slice(2)
    .split('/')
    .reduce<unknown>((node, key) => (node as Raw)[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
}

/** A schema with every `$ref` replaced by its target (the contract's request schemas are not recursive). */
function deref(doc: JsonSchema, value: unknown, depth = 0): unknown {
  if (depth > 64) throw new Error('openapi: $ref nesting deeper than 64 (a recursive request schema?)');
  if (Array.isArray(value)) return value.map((v) => deref(doc, v, depth + 1));
  if (typeof value !== 'object' || value === null) return value;
  const target = resolve(doc, value as Raw);
  if (target !== value) return deref(doc, target, depth + 1);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, deref(doc, v, depth + 1)]));
}
