import type { ProviderMapping, ProviderScalar } from '../../generated/provider-mappings.js';
import type { InputRefusal } from '../deployments/deployment.js';

export type MappedInput = { ok: true; body: Record<string, unknown> } | { ok: false; field: string; value: unknown };

/** Writes `value` at a dot path, creating the objects on the way (`image.url` -> { image: { url } }). */
function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    node = (node[part] = typeof next === 'object' && next !== null && !Array.isArray(next) ? next : {}) as Record<
      string,
      unknown
    >;
  }
  node[parts[parts.length - 1]] = value;
}

function convert(value: unknown, as: NonNullable<ProviderMapping['fields'][string]['as']>): unknown {
  if (as === 'string') return typeof value === 'string' ? value : String(value);
  if (as === 'boolean') return value === true || value === 'true';
  const number = typeof value === 'number' ? value : Number(value);
  return as === 'integer' ? Math.trunc(number) : number;
}

/** Whether a field the provider does not take holds the model's default (which the validator filled in): sent as nothing. */
function isDefault(value: unknown, unsupported: { default?: unknown }): boolean {
  return 'default' in unsupported && JSON.stringify(value) === JSON.stringify(unsupported.default);
}

/**
 * A task's input as the provider names it (spec/providers/<protocol>.yaml, generated/provider-mappings.ts).
 * A value the mapping has no provider value for (a model that `serves: subset`), or a field the
 * provider does not take set to anything but the model's default, is answered as such: the
 * request cannot go to that provider. The catalogue's validator has already checked the input, so
 * every other value converts.
 */
export function mapInput(mapping: ProviderMapping, input: Record<string, unknown>): MappedInput {
  const body: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(input)) {
    if (value === undefined) continue;
    const rule = mapping.fields[field];
    if (!rule) {
      body[field] = value;
      continue;
    }
    if (rule.drop) continue;
    if (rule.unsupported) {
      if (isDefault(value, mapping.unsupported[field] ?? {})) continue;
      return { ok: false, field, value };
    }
    let sent: unknown = value;
    if (rule.values) {
      const key = String(value);
      if (!Object.hasOwn(rule.values, key)) return { ok: false, field, value };
      sent = rule.values[key] as ProviderScalar;
    } else if (rule.as) sent = convert(value, rule.as);
    setPath(body, rule.to ?? field, sent);
  }
  for (const [path, value] of Object.entries(mapping.set)) setPath(body, path, value);
  return { ok: true, body };
}

/** The first value of the input that does not map (a model that serves a subset of its values or fields); undefined when all do. */
export function inputRefusal(
  mapping: ProviderMapping,
  input: Record<string, unknown>,
  schema: Record<string, Record<string, unknown>> = {},
): InputRefusal | undefined {
  for (const [field, values] of Object.entries(mapping.unmapped)) {
    const value = input[field];
    if (value !== undefined && values.some((v) => String(v) === String(value))) {
      const accepted = schema[field]?.type === 'boolean' ? [true, false] : ((schema[field]?.enum as unknown[]) ?? []);
      return { field, value, takes: accepted.filter((a) => !values.some((v) => String(v) === String(a))) };
    }
  }
  for (const [field, unsupported] of Object.entries(mapping.unsupported)) {
    const value = input[field];
    if (value !== undefined && !isDefault(value, unsupported))
      return { field, value, takes: 'default' in unsupported ? [unsupported.default] : [] };
  }
  return undefined;
}

/** Whether every value of the input maps (a model that serves a subset of its values or fields). */
export function inputMaps(mapping: ProviderMapping, input: Record<string, unknown>): boolean {
  return inputRefusal(mapping, input) === undefined;
}

/** The value at a dot path of a provider's JSON result (`video.url`), if any. */
export function valueAt(result: unknown, path: string): unknown {
  let node = result;
  for (const part of path.split('.')) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

/**
 * One field's value as the provider takes it (its `values` or `as` of the mapping), for a
 * profile's `{input.<field>}`: undefined when absent, or when the provider does not take it
 * (unsupported and at the model's default, or a value with no provider value).
 */
export function mapField(mapping: ProviderMapping, field: string, value: unknown): unknown {
  if (value === undefined) return undefined;
  const rule = mapping.fields[field];
  if (!rule) return value;
  if (rule.unsupported) return undefined;
  if (rule.values) {
    const key = String(value);
    return Object.hasOwn(rule.values, key) ? rule.values[key] : undefined;
  }
  return rule.as ? convert(value, rule.as) : value;
}
