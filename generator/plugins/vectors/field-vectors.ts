import type { JsonSchema } from '../../load/types.js';
import type { Cases } from './cases.js';
import {
  numericRange,
  sampleItems,
  sampleOf,
  show,
  slotLabel,
  slotPath,
  slotPin,
  slotsOf,
  stringOfLength,
  type Slot,
} from './sample.js';

/** A value no format accepts. */
const BAD_URL = 'ftp://example.com/x';
/** The field name no model accepts. */
const UNKNOWN_FIELD = 'not_a_field';

/** The vectors about single fields: presence, unknown names, types, values, ranges, lengths, counts, formats. */
export function fieldVectors(cases: Cases): void {
  requiredVectors(cases);
  unknownFieldVector(cases);
  typeVectors(cases);
  for (const slot of slotsOf(cases.model)) {
    enumVectors(cases, slot);
    rangeVectors(cases, slot);
    lengthVectors(cases, slot);
    countVectors(cases, slot);
    patternVectors(cases, slot);
  }
}

/** Each required field left out. */
function requiredVectors(cases: Cases): void {
  for (const field of cases.model.fields.filter((f) => f.required)) {
    cases.reject(
      `${field.name} missing rejected`,
      cases.with([field.name], undefined),
      [field.name],
      `input.${field.name}`,
      'required',
    );
  }
}

function unknownFieldVector(cases: Cases): void {
  const input = { ...cases.base, [UNKNOWN_FIELD]: 'x' };
  cases.reject(`unknown field ${UNKNOWN_FIELD} rejected`, input, [], `input.${UNKNOWN_FIELD}`, 'unknown_field');
  // Fields of the dictionary this mode never has (aspect_ratio on image-to-video): unknown here, whatever the value.
  for (const field of cases.model.absentFields) {
    const withField = { ...cases.base, [field.name]: sampleOf(field) };
    cases.reject(
      `${field.name} (not a field of ${cases.model.mode}) rejected as unknown`,
      withField,
      [],
      `input.${field.name}`,
      'unknown_field',
    );
  }
}

/** A value of another JSON type than the schema's. */
function wrongType(schema: JsonSchema): unknown {
  switch (schema.type) {
    case 'string':
      return 42;
    case 'integer':
    case 'number':
      return '5';
    case 'boolean':
      return 'true';
    default:
      return 'x';
  }
}

/** Each top-level field given a value of the wrong JSON type. */
function typeVectors(cases: Cases): void {
  for (const field of cases.model.fields) {
    const value = wrongType(field.schema);
    const name = `${field.name}=${JSON.stringify(value)} (wrong type) rejected`;
    cases.reject(name, cases.with([field.name], value), [field.name], `input.${field.name}`, 'type');
  }
}

/** A value of the schema's type outside its enum. */
function outsideEnum(schema: JsonSchema, values: unknown[]): unknown {
  if (schema.type === 'boolean') return [true, false].find((b) => !values.includes(b));
  if (schema.type === 'integer' || schema.type === 'number') return Math.max(...(values as number[])) + 1;
  return values.includes('not_a_value') ? undefined : 'not_a_value';
}

/** Each value of an enum accepted, and one value outside it rejected. */
function enumVectors(cases: Cases, slot: Slot): void {
  const values = slot.schema.enum as unknown[] | undefined;
  if (!values) return;
  const label = slotLabel(slot.segments);
  for (const value of values) {
    cases.accept(`${label}=${show(value)} accepted`, cases.with(slot.segments, value), [slotPin(slot)]);
  }
  const bad = outsideEnum(slot.schema, values);
  if (bad === undefined) return;
  cases.reject(
    `${label}=${show(bad)} (not a value) rejected`,
    cases.with(slot.segments, bad),
    [slotPin(slot)],
    slotPath(slot.segments),
    'enum',
  );
}

/** min and max (and the auto value) accepted, one step outside either end rejected. */
function rangeVectors(cases: Cases, slot: Slot): void {
  const range = numericRange(slot.schema);
  if (!range) return;
  const label = slotLabel(slot.segments);
  const pins = [slotPin(slot)];
  const path = slotPath(slot.segments);
  const ruleFor = (keyword: string) => (range.auto === undefined ? keyword : 'range_or_auto');
  const at = (value: number) => cases.with(slot.segments, value);
  if (range.min !== undefined) {
    cases.accept(`${label}=${range.min} (min) accepted`, at(range.min), pins);
    const below = range.min - range.step;
    if (below !== range.auto)
      cases.reject(`${label}=${below} (min-${range.step}) rejected`, at(below), pins, path, ruleFor('minimum'));
  }
  if (range.max !== undefined) {
    cases.accept(`${label}=${range.max} (max) accepted`, at(range.max), pins);
    const above = range.max + range.step;
    if (above !== range.auto)
      cases.reject(`${label}=${above} (max+${range.step}) rejected`, at(above), pins, path, ruleFor('maximum'));
  }
  if (range.auto !== undefined) cases.accept(`${label}=${range.auto} (auto) accepted`, at(range.auto), pins);
}

/** A string of exactly maxLength accepted, one longer rejected; one shorter than minLength rejected. */
function lengthVectors(cases: Cases, slot: Slot): void {
  if (slot.schema.type !== 'string') return;
  const label = slotLabel(slot.segments);
  const pins = [slotPin(slot)];
  const path = slotPath(slot.segments);
  const max = slot.schema.maxLength as number | undefined;
  const min = slot.schema.minLength as number | undefined;
  const hint = { field: slot.field.name, reference: slot.field.reference, n: 1 };
  const at = (length: number) => cases.with(slot.segments, stringOfLength(slot.schema, hint, length).value);
  if (max !== undefined) {
    // A URL of exactly maxLength characters still has to be a URL (a longer one fails on its length alone).
    if (!stringOfLength(slot.schema, hint, max).matches)
      throw new Error(`${cases.model.id}: no value of ${max} characters matches the pattern of ${label}`);
    cases.accept(`${label} of ${max} characters (maxLength) accepted`, at(max), pins);
    cases.reject(`${label} of ${max + 1} characters (maxLength+1) rejected`, at(max + 1), pins, path, 'maxLength');
  }
  if (min !== undefined && min > 0) {
    cases.reject(`${label} of ${min - 1} characters (minLength-1) rejected`, at(min - 1), pins, path, 'minLength');
  }
}

const items = (n: number) => `${n} item${n === 1 ? '' : 's'}`;

/** maxItems items accepted, one more rejected; one fewer than minItems rejected. */
function countVectors(cases: Cases, slot: Slot): void {
  if (slot.schema.type !== 'array') return;
  const label = slotLabel(slot.segments);
  const pins = [slotPin(slot)];
  const path = slotPath(slot.segments);
  const max = slot.schema.maxItems as number | undefined;
  const min = slot.schema.minItems as number | undefined;
  const at = (count: number) =>
    cases.with(
      slot.segments,
      sampleItems(slot.schema, { field: slot.field.name, reference: slot.field.reference, n: 1 }, count),
    );
  if (max !== undefined) {
    // Dropped when another rule (a total over several lists) cannot hold with this many.
    cases.accept(`${label} with ${items(max)} (maxItems) accepted`, at(max), pins);
    cases.reject(`${label} with ${items(max + 1)} (maxItems+1) rejected`, at(max + 1), pins, path, 'maxItems');
  }
  if (min !== undefined && min > 0) {
    cases.reject(`${label} with ${items(min - 1)} (minItems-1) rejected`, at(min - 1), pins, path, 'minItems');
  }
}

/** A value outside the format (pattern) of a string, or of a list's first item. */
function patternVectors(cases: Cases, slot: Slot): void {
  if (slot.schema.type !== 'string' || typeof slot.schema.pattern !== 'string') return;
  const name = `${slotLabel(slot.segments)}=${BAD_URL} (pattern) rejected`;
  cases.reject(name, cases.with(slot.segments, BAD_URL), [slotPin(slot)], slotPath(slot.segments), 'pattern');
}
