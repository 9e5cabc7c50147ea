import type { JsonSchema, RawField } from './types.js';

export interface FormatDef {
  pattern: string;
  message: string;
}

/**
 * Builds one field's JSON Schema: the dictionary entry narrowed by the model's override.
 * mediaforge-only keys are turned into JSON Schema (`format` into `pattern`, `auto` into anyOf),
 * and each pattern's ajv schemaPath is recorded with its message key.
 */
export function fieldSchema(
  name: string,
  dictionary: JsonSchema,
  override: RawField,
  formats: Record<string, FormatDef>,
  patternMessages: Record<string, string>,
): JsonSchema {
  const base = resolveFormats(dictionary, formats, `#/properties/${name}`, patternMessages);
  const schema: JsonSchema = {};
  const description = override.description ?? base.description;
  if (description !== undefined) schema.description = description;
  for (const [key, value] of Object.entries(base)) {
    if (key !== 'description' && key !== 'default') schema[key] = value;
  }
  if (override.values !== undefined) schema.enum = override.values;
  if (override.minLength !== undefined) schema.minLength = override.minLength;
  if (override.maxLength !== undefined) schema.maxLength = override.maxLength;
  if (override.minItems !== undefined) schema.minItems = override.minItems;
  if (override.maxItems !== undefined) schema.maxItems = override.maxItems;
  const minimum = override.min ?? (base.minimum as number | undefined);
  const maximum = override.max ?? (base.maximum as number | undefined);
  delete schema.minimum;
  delete schema.maximum;
  if (override.auto !== undefined) {
    // A value outside the range that lets the model choose (duration -1).
    const range: JsonSchema = {};
    if (minimum !== undefined) range.minimum = minimum;
    if (maximum !== undefined) range.maximum = maximum;
    schema.anyOf = [{ const: override.auto }, range];
  } else {
    if (minimum !== undefined) schema.minimum = minimum;
    if (maximum !== undefined) schema.maximum = maximum;
  }
  const defaultValue = override.default !== undefined ? override.default : base.default;
  if (defaultValue !== undefined) schema.default = defaultValue;
  return schema;
}

/** Copies a dictionary schema, replacing `format: <name>` by its pattern and dropping mediaforge keys. */
function resolveFormats(
  schema: JsonSchema,
  formats: Record<string, FormatDef>,
  schemaPath: string,
  patternMessages: Record<string, string>,
): JsonSchema {
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'reference') continue;
    if (key === 'format') {
      const def = formats[value as string];
      out.pattern = def.pattern;
      patternMessages[`${schemaPath}/pattern`] = def.message;
    } else if (key === 'items' && isObject(value)) {
      out.items = resolveFormats(value, formats, `${schemaPath}/items`, patternMessages);
    } else if (key === 'properties' && isObject(value)) {
      out.properties = Object.fromEntries(
        Object.entries(value).map(([prop, sub]) => [
          prop,
          resolveFormats(sub as JsonSchema, formats, `${schemaPath}/properties/${prop}`, patternMessages),
        ]),
      );
    } else out[key] = value;
  }
  return out;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
