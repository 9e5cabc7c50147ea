import type { JsonSchema, Model, ModelField, Scalar } from '../../load/types.js';

/** A request input as a vector carries it. */
export type Input = Record<string, unknown>;
export type Segment = string | number;

export const PROMPT = 'A red fox trots through fresh snow at dawn.';
const EXTENSIONS: Record<string, string> = { image: 'png', video: 'mp4', audio: 'mp3', document: 'pdf' };

export const clone = <T>(value: T): T => (value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T));
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
export const fieldOf = (model: Model, name: string): ModelField | undefined =>
  model.fields.find((f) => f.name === name);
/** Shown in vector names: strings as they are, anything else as JSON. */
export const show = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/** A field counts as given when it is present and, for arrays, not empty (as the validators count it). */
export function given(value: unknown): boolean {
  return value !== undefined && value !== null && !(Array.isArray(value) && value.length === 0);
}

/** A place a value can be put: a field, or something inside the first item of an array field. */
export interface Slot {
  field: ModelField;
  segments: Segment[];
  schema: JsonSchema;
}

/** duration_seconds, loras[0].scale, elements[0].image_urls[0]. */
export const slotLabel = (segments: Segment[]) =>
  segments.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');
export const slotPath = (segments: Segment[]) => `input.${slotLabel(segments)}`;
/** What a vector on the slot keeps fixed: the whole field, or only its first item. */
export const slotPin = (slot: Slot) => (slot.segments.length === 1 ? slot.field.name : `${slot.field.name}[0]`);

/** Every field, and every item and item property inside array fields, depth first. */
export function slotsOf(model: Model): Slot[] {
  const out: Slot[] = [];
  const walk = (field: ModelField, segments: Segment[], schema: JsonSchema) => {
    out.push({ field, segments, schema });
    if (schema.type === 'array' && isRecord(schema.items)) walk(field, [...segments, 0], schema.items);
    if (schema.type === 'object' && isRecord(schema.properties)) {
      for (const [name, sub] of Object.entries(schema.properties)) walk(field, [...segments, name], sub as JsonSchema);
    }
  };
  for (const field of model.fields) walk(field, [field.name], field.schema);
  return out;
}

export interface NumericRange {
  min?: number;
  max?: number;
  /** The value outside the range that lets the model choose (duration -1). */
  auto?: number;
  step: number;
}

/** The range of a numeric schema, looking inside anyOf for a field with an auto value. */
export function numericRange(schema: JsonSchema): NumericRange | undefined {
  if (schema.type !== 'integer' && schema.type !== 'number') return undefined;
  const anyOf = schema.anyOf as JsonSchema[] | undefined;
  const range = anyOf?.find((s) => !('const' in s)) ?? schema;
  return {
    min: range.minimum as number | undefined,
    max: range.maximum as number | undefined,
    auto: anyOf?.find((s) => 'const' in s)?.const as number | undefined,
    step: schema.type === 'integer' ? 1 : 0.5,
  };
}

/** The fixed set of values a schema allows, if it has one. */
export function choices(schema: JsonSchema): Scalar[] | undefined {
  if (Array.isArray(schema.enum)) return schema.enum as Scalar[];
  if (schema.type === 'boolean') return [true, false];
  return undefined;
}

/** Valid values to try when another value of the field is needed: its choices, or its default and range ends. */
export function alternatives(schema: JsonSchema): Scalar[] {
  const fixed = choices(schema);
  if (fixed) return fixed;
  const range = numericRange(schema);
  if (!range) return [];
  const candidates = [
    schema.default,
    range.min,
    range.min === undefined ? undefined : range.min + range.step,
    range.max,
  ];
  return [...new Set(candidates.filter((v): v is number => typeof v === 'number' && inRange(range, v)))];
}

export const inRange = (range: NumericRange, value: number) =>
  (range.min === undefined || value >= range.min) && (range.max === undefined || value <= range.max);

/** The prompt text repeated and cut to exactly `length` characters. */
export const textOfLength = (length: number) =>
  `${PROMPT} `.repeat(Math.ceil(length / (PROMPT.length + 1)) + 1).slice(0, length);

/**
 * A string of exactly `length` characters for a schema: the prompt text, or for a patterned string
 * (a URL) a sample value padded inside its last path segment, so that only its length is at stake.
 * Where no padding keeps the pattern (the pattern itself bounds the length), the padded sample is
 * returned anyway and `matches` says so.
 */
export function stringOfLength(schema: JsonSchema, hint: Hint, length: number): { value: string; matches: boolean } {
  if (typeof schema.pattern !== 'string') return { value: textOfLength(length), matches: true };
  const pattern = new RegExp(schema.pattern, 'u');
  const base = sampleString(schema, hint);
  const fill = 'x'.repeat(Math.max(length - base.length, 0));
  const cut = base.lastIndexOf('/') + 1;
  const candidates = [base.slice(0, cut) + fill + base.slice(cut), base + fill].map((c) => c.slice(0, length));
  const found = candidates.find((c) => pattern.test(c));
  return { value: found ?? candidates[0], matches: found !== undefined };
}

/** What a sample value is named after: the field, its reference kind, and its position in a list. */
export interface Hint {
  field: string;
  reference?: string;
  n: number;
}

/** A valid value for a schema: its default, its first value, its minimum, or a made-up value that fits. */
export function sample(schema: JsonSchema, hint: Hint): unknown {
  if (schema.default !== undefined && schema.type !== 'array') return clone(schema.default);
  if (Array.isArray(schema.enum)) return schema.enum[0];
  switch (schema.type) {
    case 'string':
      return sampleString(schema, hint);
    case 'integer':
    case 'number': {
      const range = numericRange(schema)!;
      return range.min ?? range.auto ?? 0;
    }
    case 'boolean':
      return false;
    case 'array':
      return sampleItems(schema, hint, Math.max((schema.minItems as number | undefined) ?? 0, 1));
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const required = (schema.required ?? []) as string[];
      return Object.fromEntries(required.map((name) => [name, sample(properties[name], hint)]));
    }
  }
  throw new Error(`no sample value for a schema of type ${String(schema.type)}`);
}

/** `count` distinct valid items of an array schema. */
export function sampleItems(schema: JsonSchema, hint: Hint, count: number): unknown[] {
  return Array.from({ length: count }, (_, i) => sample(schema.items as JsonSchema, { ...hint, n: i + 1 }));
}

function sampleString(schema: JsonSchema, hint: Hint): string {
  if (typeof schema.pattern !== 'string') {
    const max = schema.maxLength as number | undefined;
    return max !== undefined && max < PROMPT.length ? textOfLength(max) : PROMPT;
  }
  const pattern = new RegExp(schema.pattern);
  const ext = EXTENSIONS[hint.reference ?? ''] ?? (hint.field.includes('video') ? 'mp4' : 'png');
  const candidates = [
    hint.reference === 'link' ? 'https://example.com/page' : `https://example.com/${hint.field}-${hint.n}.${ext}`,
    `https://example.com/lora-${hint.n}.safetensors`,
    `subject_${hint.n}`,
  ];
  const found = candidates.find((c) => pattern.test(c));
  if (found === undefined) throw new Error(`no sample value matches the pattern ${schema.pattern}`);
  return found;
}

/** A valid value for one field of the model. */
export function sampleOf(field: ModelField, count?: number): unknown {
  const hint = { field: field.name, reference: field.reference, n: 1 };
  return count === undefined ? sample(field.schema, hint) : sampleItems(field.schema, hint, count);
}

/** The schema one segment further down. */
function childSchema(schema: JsonSchema, segment: Segment): JsonSchema {
  if (typeof segment === 'number') return schema.items as JsonSchema;
  return (schema.properties as Record<string, JsonSchema>)[segment];
}

/**
 * A copy of input with `value` put at segments (undefined removes it). Missing containers on the
 * way (the array and its first item) are filled with sample values first.
 */
export function setAt(model: Model, input: Input, segments: Segment[], value: unknown): Input {
  const out = clone(input);
  const field = fieldOf(model, segments[0] as string);
  if (!field) throw new Error(`${String(segments[0])} is not a field of ${model.id}`);
  const hint = { field: field.name, reference: field.reference, n: 1 };
  let container = out as Record<Segment, unknown>;
  let schema: JsonSchema = { type: 'object', properties: { [field.name]: field.schema } };
  for (const segment of segments.slice(0, -1)) {
    schema = childSchema(schema, segment);
    if (!given(container[segment]) || typeof container[segment] !== 'object') container[segment] = sample(schema, hint);
    container = container[segment] as Record<Segment, unknown>;
  }
  const last = segments[segments.length - 1];
  if (value === undefined) delete container[last];
  else container[last] = clone(value);
  return out;
}
