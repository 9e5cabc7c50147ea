import type { Operation, OperationParameter, ParameterIn } from '../../load/operations.js';
import type { JsonSchema } from '../../load/types.js';

/** One request with one bad value: the operation must refuse it with `want`, in its layer's shape. */
export interface RequestVector {
  operationId: string;
  method: string;
  layer: Operation['layer'];
  auth: boolean;
  /** The kind of input that carries the bad value. */
  in: ParameterIn | 'body';
  /** The request path, every path parameter filled in (the bad one, or a valid stand-in). */
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body?: unknown;
  want: { error: string; param: string };
  /** What is wrong, for the test's name. */
  case: string;
}

/** A value the parameter's schema refuses, as it would travel in a URL or header; undefined: leave it out; null: none the contract can state. */
function badValue(param: OperationParameter): { value: string | undefined; case: string } | null {
  const s = param.schema;
  if (s.type === 'integer') return { value: '1e1', case: 'an integer in exponent notation' };
  if (Array.isArray(s.enum)) return { value: `${String(s.enum[0])}-not-listed`, case: 'a value outside the enum' };
  if (s.format === 'date') return { value: '2026-02-30', case: 'a day that does not exist' };
  if (typeof s.maxLength === 'number')
    return { value: 'x'.repeat(s.maxLength + 1), case: `${s.maxLength + 1} characters` };
  if (param.in === 'query' && typeof s.minLength === 'number' && s.minLength > 0) return { value: '', case: 'empty' };
  if (param.required && param.in !== 'path') return { value: undefined, case: 'missing' };
  return null;
}

/** A body with one property of the wrong type (or, where nothing is required, one unknown property). */
function badBody(schema: JsonSchema): { body: Record<string, unknown>; param: string; case: string } {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const name = ((schema.required as string[] | undefined) ?? [])[0];
  if (name === undefined) {
    if (schema.additionalProperties === false)
      return { body: { unexpected: 1 }, param: 'unexpected', case: 'an unknown property' };
    const first = Object.keys(properties)[0];
    return { body: { [first]: 42 }, param: first, case: `${first} of the wrong type` };
  }
  // The other required properties get values their schemas accept, so the bad one is the only problem.
  const others = Object.fromEntries(
    ((schema.required as string[]) ?? []).filter((n) => n !== name).map((n) => [n, goodValue(properties[n] ?? {})]),
  );
  return {
    body: { ...others, [name]: properties[name]?.type === 'string' ? 42 : 'x' },
    param: name,
    case: `${name} of the wrong type`,
  };
}

/** A value a simple schema accepts (a string, a number in range, the first enum value). */
function goodValue(schema: JsonSchema): unknown {
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (schema.const !== undefined) return schema.const;
  if (schema.type === 'integer' || schema.type === 'number')
    return typeof schema.minimum === 'number' ? schema.minimum : 1;
  if (schema.type === 'boolean') return true;
  if (schema.type === 'object') return {};
  if (schema.type === 'array') return [];
  return 'x';
}

/** The first variant of a oneOf (a body discriminated on the model), else the schema itself. */
function firstVariant(schema: JsonSchema): JsonSchema {
  return Array.isArray(schema.oneOf) ? (schema.oneOf[0] as JsonSchema) : schema;
}

/** For every operation and each kind of input it takes, one request with a bad value. */
export function requestVectors(ops: Operation[]): RequestVector[] {
  const out: RequestVector[] = [];
  for (const op of ops) {
    const base = { operationId: op.operationId, method: op.method, layer: op.layer, auth: op.auth };
    // A path parameter's stand-in: its schema's first example where it has one (a value its pattern takes), else `<name>_1`.
    const standIn = (name: string) => {
      const examples = op.parameters.find((p) => p.in === 'path' && p.name === name)?.schema.examples;
      return Array.isArray(examples) && typeof examples[0] === 'string' ? examples[0] : `${name}_1`;
    };
    const fill = (bad?: { name: string; value: string }) =>
      op.path.replace(/\{(\w+)\}/g, (_m, name: string) =>
        encodeURIComponent(bad?.name === name ? bad.value : standIn(name)),
      );
    for (const where of ['path', 'query', 'header'] as const) {
      for (const param of op.parameters.filter((p) => p.in === where)) {
        const bad = badValue(param);
        if (!bad) continue;
        // Every other required parameter of the kind gets a harmless value, so the bad one is the only problem.
        const others = Object.fromEntries(
          op.parameters.filter((p) => p.in === where && p.required && p !== param).map((p) => [p.name, 'x']),
        );
        const given = bad.value === undefined ? others : { ...others, [param.name]: bad.value };
        out.push({
          ...base,
          in: where,
          path: where === 'path' ? fill({ name: param.name, value: bad.value! }) : fill(),
          query: where === 'query' ? given : {},
          headers: where === 'header' ? given : {},
          want: { error: param.error, param: param.name },
          case: `${where} ${param.name}: ${bad.case}`,
        });
        break;
      }
    }
    if (op.body?.schema && op.body.checkedBy !== 'none') {
      const bad = badBody(firstVariant(op.body.schema));
      out.push({
        ...base,
        in: 'body',
        path: fill(),
        query: {},
        headers: {},
        body: bad.body,
        // A body the model's validator checks answers with its field problems (40001).
        want: { error: op.body.checkedBy === 'contract' ? op.body.error : 'invalid_input', param: bad.param },
        case: `body ${bad.case}`,
      });
    }
  }
  return out;
}
