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
  fields: Record<string, unknown>;
  file?: UploadedFile;
}

/** The size limit of one uploaded reference image (the specification's image references go up to 20 MB). */
export const UPLOAD_LIMIT_BYTES = 20 * 1024 * 1024;

/** Busboy limits of the compatible layer's multipart parser (registered for POST /v1/videos only). */
export function multipartLimits(bodyLimitBytes: number) {
  return { fieldNameSize: 200, fieldSize: bodyLimitBytes, fields: 200, files: 1, fileSize: UPLOAD_LIMIT_BYTES, parts: 201, headerPairs: 200 };
}

const FORBIDDEN_SEGMENTS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Reads a multipart/form-data body the way the openai SDK writes it: text fields, bracketed keys
 * (`input_reference[image_url]` -> nested object, `reference_image_urls[]` -> array,
 * `loras[][path]` -> array of objects) and at most one file part. Values stay strings; the
 * mapping coerces them by the model's input schema.
 */
export async function readForm(request: FastifyRequest): Promise<FormBody> {
  const fields: Record<string, unknown> = {};
  let file: UploadedFile | undefined;
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      // Always drain the stream, so busboy moves on (and the size limit is enforced).
      const bytes = await part.toBuffer();
      if (file) throw new ApiError('payload_too_large');
      file = { field: part.fieldname, filename: part.filename, mimetype: part.mimetype, bytes };
      continue;
    }
    if (part.fieldnameTruncated || part.valueTruncated) throw new ApiError('payload_too_large');
    assignFormValue(fields, part.fieldname, String(part.value));
  }
  return { fields, file };
}

/** Splits `a[b][]` into ['a', 'b', '']; a key that is not in bracket form is one plain name. */
export function formKeySegments(key: string): string[] {
  const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
  if (!match) return [key];
  const rest = [...match[2].matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1]);
  return [match[1], ...rest];
}

export function assignFormValue(target: Record<string, unknown>, key: string, value: unknown): void {
  const segments = formKeySegments(key);
  if (segments.some((s) => FORBIDDEN_SEGMENTS.has(s))) throw invalidInput([fieldIssue(key, 'unknown_field', 'unknown_field')]);
  let node: Record<string, unknown> | unknown[] = target;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i];
    const last = i === segments.length - 1;
    const next = segments[i + 1];
    if (Array.isArray(node)) {
      if (segment !== '' && !/^\d{1,4}$/.test(segment)) throw invalidInput([fieldIssue(key, 'type', 'type', { type: 'array' })]);
      if (last) {
        if (segment === '') node.push(value);
        else node[Number(segment)] = value;
        return;
      }
      if (segment === '') {
        // `a[][k]`: fill the last element until it already has k, then start a new one.
        const tail: unknown = node[node.length - 1];
        if (isPlainObject(tail) && !(next in tail)) node = tail;
        else {
          const fresh = {};
          node.push(fresh);
          node = fresh;
        }
      } else {
        const index = Number(segment);
        node[index] ??= next === '' ? [] : {};
        node = node[index] as Record<string, unknown> | unknown[];
      }
      continue;
    }
    if (last) {
      node[segment] = value;
      return;
    }
    const existing = node[segment];
    const wanted = next === '' || /^\d{1,4}$/.test(next) ? 'array' : 'object';
    if (existing === undefined) node[segment] = wanted === 'array' ? [] : {};
    else if ((wanted === 'array') !== Array.isArray(existing) || (!Array.isArray(existing) && !isPlainObject(existing))) {
      throw invalidInput([fieldIssue(key, 'type', 'type', { type: wanted })]);
    }
    node = node[segment] as Record<string, unknown> | unknown[];
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

type Schema = Record<string, unknown>;

/** JSON-schema types a schema admits, through anyOf / oneOf and const branches. */
function admittedTypes(schema: Schema): Set<string> {
  const types = new Set<string>();
  const type = schema.type;
  if (typeof type === 'string') types.add(type);
  if (Array.isArray(type)) for (const t of type) types.add(String(t));
  if ('const' in schema) types.add(schema.const === null ? 'null' : typeof schema.const === 'number' ? 'number' : typeof schema.const);
  for (const branch of [...((schema.anyOf as Schema[]) ?? []), ...((schema.oneOf as Schema[]) ?? [])]) for (const t of admittedTypes(branch)) types.add(t);
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
