import type { FastifyRequest } from 'fastify';
import type {} from '@fastify/multipart';
import { ApiError, fieldIssue, invalidInput } from '../errors.js';

/** An uploaded file part of a multipart createVideo. */
export interface UploadedFile {
  field: string;
  filename: string;
  mimetype: string;
  bytes: Buffer;
}

export interface FormBody {
  /** The text fields in the order sent, before any shaping (that needs the model's schema). */
  entries: [string, string][];
  file?: UploadedFile;
}

/** The size limit of one uploaded reference image (the specification's image references go up to 20 MB). */
export const UPLOAD_LIMIT_BYTES = 20 * 1024 * 1024;

/** The highest array index + 1 a form key may name where the model's schema gives no maxItems. */
export const FORM_INDEX_LIMIT = 100;
/** How many name segments a form key may have (`loras[0][path]` has 3). */
export const FORM_KEY_SEGMENTS = 8;

/**
 * Busboy limits of the compatible layer's multipart parser (registered for POST /v1/videos only):
 * every count and size is bounded before any field is shaped.
 */
export function multipartLimits(bodyLimitBytes: number) {
  return {
    fieldNameSize: 200,
    fieldSize: bodyLimitBytes,
    fields: 200,
    files: 1,
    fileSize: UPLOAD_LIMIT_BYTES,
    parts: 201,
    headerPairs: 200,
  };
}

const FORBIDDEN_SEGMENTS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Reads a multipart/form-data body the way the openai SDK writes it: text fields and at most one
 * file part. The parser's limits bound the counts; the text fields together are bounded by
 * `fieldBytesLimit` (the JSON body limit), so a form holds no more text than a JSON body may.
 * A body the parser cannot read (no boundary, a truncated part, bad part headers) is a 400
 * naming `body`; a limit passed is a 413 naming the field or `body`.
 */
export async function readForm(request: FastifyRequest, fieldBytesLimit: number): Promise<FormBody> {
  const entries: [string, string][] = [];
  let file: UploadedFile | undefined;
  let fieldBytes = 0;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        // Always drain the stream, so busboy moves on (and the size limit is enforced).
        const bytes = await part.toBuffer();
        if (file) throw new ApiError('payload_too_large', { param: 'body' });
        file = { field: part.fieldname, filename: part.filename, mimetype: part.mimetype, bytes };
        continue;
      }
      if (part.fieldnameTruncated || part.valueTruncated)
        throw new ApiError('payload_too_large', { param: part.fieldname.slice(0, 200) || 'body' });
      const value = String(part.value);
      fieldBytes += Buffer.byteLength(part.fieldname) + Buffer.byteLength(value);
      if (fieldBytes > fieldBytesLimit) throw new ApiError('payload_too_large', { param: 'body' });
      entries.push([part.fieldname, value]);
    }
  } catch (error) {
    // @fastify/multipart's own errors carry a status (mapped by the error handler); busboy's parse
    // errors ("Unexpected end of form", "Malformed part header", no boundary) do not: the body is bad.
    if (error instanceof ApiError || typeof (error as { statusCode?: unknown }).statusCode === 'number') throw error;
    throw new ApiError('invalid_parameter', { param: 'body' });
  }
  return { entries, file };
}

/**
 * The form's text fields as nested fields: bracketed keys (`input_reference[image_url]` -> nested
 * object, `reference_image_urls[]` -> array, `loras[][path]` -> array of objects), each index
 * bounded by the field's maxItems in `inputSchema` (the model's), or FORM_INDEX_LIMIT.
 */
export function formFields(entries: readonly [string, string][], inputSchema?: Schema): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of entries) assignFormValue(fields, key, value, inputSchema);
  return fields;
}

/** Splits `a[b][]` into ['a', 'b', '']; a key that is not in bracket form is one plain name. */
export function formKeySegments(key: string): string[] {
  const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
  if (!match) return [key];
  const rest = [...match[2].matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1]);
  return [match[1], ...rest];
}

/**
 * Puts one form value at its key's place in `target`. `schema` (the model's input schema) gives
 * each array its maxItems: an index at or past it is refused before anything is allocated.
 */
export function assignFormValue(target: Record<string, unknown>, key: string, value: unknown, schema?: Schema): void {
  const segments = formKeySegments(key);
  if (segments.some((s) => FORBIDDEN_SEGMENTS.has(s)))
    throw invalidInput([fieldIssue(key, 'unknown_field', 'unknown_field')]);
  if (segments.length > FORM_KEY_SEGMENTS)
    throw invalidInput([fieldIssue(key, 'max_depth', 'max_depth', { limit: FORM_KEY_SEGMENTS })]);
  let node: Record<string, unknown> | unknown[] = target;
  let nodeSchema: Schema | undefined = schema;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i];
    const last = i === segments.length - 1;
    const next = segments[i + 1];
    if (Array.isArray(node)) {
      if (segment !== '' && !/^\d{1,4}$/.test(segment))
        throw invalidInput([fieldIssue(key, 'type', 'type', { type: 'array' })]);
      // The index this key writes: `[]` appends unless `a[][k]` fills the last element's missing k.
      const tail: unknown = node[node.length - 1];
      const fillsTail = segment === '' && !last && isPlainObject(tail) && !(next in tail);
      const index = segment !== '' ? Number(segment) : fillsTail ? node.length - 1 : node.length;
      const bound = maxItemsOf(nodeSchema) ?? FORM_INDEX_LIMIT;
      if (index >= bound) throw invalidInput([fieldIssue(key, 'max_items', 'max_items', { limit: bound })]);
      nodeSchema = schemaBranch(nodeSchema, (s) => s.items as Schema | undefined);
      if (last) {
        if (segment === '') node.push(value);
        else node[Number(segment)] = value;
        return;
      }
      if (segment === '') {
        // `a[][k]`: fill the last element until it already has k, then start a new one.
        if (fillsTail) node = tail as Record<string, unknown>;
        else {
          const fresh = {};
          node.push(fresh);
          node = fresh;
        }
      } else {
        node[index] ??= next === '' ? [] : {};
        node = node[index] as Record<string, unknown> | unknown[];
      }
      continue;
    }
    if (last) {
      node[segment] = value;
      return;
    }
    nodeSchema = schemaBranch(nodeSchema, (s) => (s.properties as Record<string, Schema> | undefined)?.[segment]);
    const existing = node[segment];
    const wanted = next === '' || /^\d{1,4}$/.test(next) ? 'array' : 'object';
    if (existing === undefined) node[segment] = wanted === 'array' ? [] : {};
    else if (
      (wanted === 'array') !== Array.isArray(existing) ||
      (!Array.isArray(existing) && !isPlainObject(existing))
    ) {
      throw invalidInput([fieldIssue(key, 'type', 'type', { type: wanted })]);
    }
    node = node[segment] as Record<string, unknown> | unknown[];
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

type Schema = Record<string, unknown>;

/** What `pick` finds in a schema or, failing that, in its first anyOf / oneOf branch that has it. */
function schemaBranch(schema: Schema | undefined, pick: (s: Schema) => Schema | undefined): Schema | undefined {
  if (!schema) return undefined;
  for (const s of [schema, ...((schema.anyOf as Schema[]) ?? []), ...((schema.oneOf as Schema[]) ?? [])]) {
    const found = pick(s);
    if (found) return found;
  }
  return undefined;
}

function maxItemsOf(schema: Schema | undefined): number | undefined {
  const found = schemaBranch(schema, (s) => (typeof s.maxItems === 'number' ? s : undefined));
  return found?.maxItems as number | undefined;
}

/** JSON-schema types a schema admits, through anyOf / oneOf and const branches. */
function admittedTypes(schema: Schema): Set<string> {
  const types = new Set<string>();
  const type = schema.type;
  if (typeof type === 'string') types.add(type);
  if (Array.isArray(type)) for (const t of type) types.add(String(t));
  if ('const' in schema)
    types.add(schema.const === null ? 'null' : typeof schema.const === 'number' ? 'number' : typeof schema.const);
  for (const branch of [...((schema.anyOf as Schema[]) ?? []), ...((schema.oneOf as Schema[]) ?? [])])
    for (const t of admittedTypes(branch)) types.add(t);
  return types;
}

/**
 * A form carries only strings: a value is turned into the number, boolean or null its schema asks
 * for when it reads as one; anything else is left for the model's validator to report.
 */
export function coerceFormValue(value: unknown, schema: Schema | undefined): unknown {
  if (!schema) return value;
  if (Array.isArray(value)) return value.map((item) => coerceFormValue(item, schema.items as Schema | undefined));
  if (isPlainObject(value)) {
    const properties = (schema.properties as Record<string, Schema> | undefined) ?? {};
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, coerceFormValue(v, properties[k])]));
  }
  if (typeof value !== 'string') return value;
  const types = admittedTypes(schema);
  if (types.has('string')) return value;
  if ((types.has('integer') || types.has('number')) && /^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  if (types.has('boolean') && (value === 'true' || value === 'false')) return value === 'true';
  if (types.has('null') && value === 'null') return null;
  return value;
}
