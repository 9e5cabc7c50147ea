import { catalogue, type CatalogueModel } from '../../generated/catalogue.js';
import type { JsonBody } from '../../generated/routes.js';
import type { FieldIssue, MessageRef } from '../../generated/support.js';
import { ApiError, fieldIssue, invalidInput } from '../errors.js';
import { coerceFormValue } from './form.js';

/**
 * The compatible layer's request mapping (POST /v1/videos -> the createTask body), over a body whose
 * envelope the contract has checked (CreateVideoRequest, generated/requests/: model a non-empty
 * string, seconds whole, size a string, input_reference one of {image_url} or {file_id}):
 * - `model`: a model id; absent, the configured default.
 * - `seconds` ("8", or 8 in JSON) -> `duration_seconds`.
 * - `size` ("WIDTHxHEIGHT") -> `aspect_ratio` + `resolution`, looked up in the model's output sizes.
 * - `input_reference` -> the model's image input: `image_url` where the model has it, else the first
 *   item of its first image reference list (for reference-to-video `reference_image_urls`).
 * - every other field passes through into `input` unchanged, so every model field stays reachable.
 */
const COMPAT_FIELDS = new Set(['model', 'seconds', 'size', 'input_reference']);

/** What `input_reference` resolved to: a URL or service:// URI, plus a stable stand-in for fingerprints. */
export interface ResolvedReference {
  url: string;
  /** Replaces `url` in the idempotency fingerprint (a signed upload link changes on every request). */
  stableToken?: string;
  /** An uploaded image to store under `key` once the request passed its checks (the URL links to it). */
  upload?: { key: string; bytes: Uint8Array };
}

/** A createVideo body (JSON, or a form read into fields) whose envelope the contract has checked. */
export type VideoFields = JsonBody<'createVideo'>;

export interface MapOptions {
  defaultModel: string;
  /** The body came from a form: string values are coerced by the model's input schema. */
  fromForm: boolean;
  /** Resolves input_reference (an uploaded file, `{image_url}`, `{file_id}`) to a URL. */
  resolveReference(reference: ReferenceSpec): ResolvedReference | Promise<ResolvedReference>;
}

export type ReferenceSpec =
  | { kind: 'upload' }
  | { kind: 'image_url'; value: string }
  | { kind: 'file_id'; value: string };

export interface MappedVideoRequest {
  model: CatalogueModel;
  /** The body for prepareRequest: `{model, input}`, exactly what createTask would be sent. */
  body: { model: string; input: Record<string, unknown> };
  reference?: ResolvedReference;
  /** Renders an input path as the field the caller sent (`input.duration_seconds` -> `seconds`). */
  rename(path: string): string;
  /** The field a whole-input rule problem is reported on, where one fits. */
  ruleParam(issue: FieldIssue): string | undefined;
}

/** Where input_reference goes in a model's input. */
export function imageTarget(model: CatalogueModel): { field: string; list: boolean } | undefined {
  const properties = model.info.inputSchema.properties;
  if (properties.image_url) return { field: 'image_url', list: false };
  const reference = model.info.referenceFields.find(([field, kind]) => kind === 'image' && properties[field]);
  if (!reference) return undefined;
  return { field: reference[0], list: properties[reference[0]].type === 'array' };
}

/** Every WIDTHxHEIGHT of a model with the aspect_ratio and resolution that produce it, in table order. */
export function sizeTable(model: CatalogueModel): { size: string; aspectRatio: string; resolution: string }[] {
  const table = model.info.outputSizes ?? {};
  return Object.entries(table).flatMap(([aspectRatio, byResolution]) =>
    Object.entries(byResolution).map(([resolution, size]) => ({ size, aspectRatio, resolution })),
  );
}

/** The WIDTHxHEIGHT of a normalized input, or '' when the model's table does not say. */
export function sizeOfInput(model: CatalogueModel | undefined, input: Record<string, unknown> | null): string {
  if (!model || !input) return '';
  const ratio = input.aspect_ratio;
  const resolution = input.resolution;
  if (typeof ratio !== 'string' || typeof resolution !== 'string') return '';
  return model.info.outputSizes?.[ratio]?.[resolution] ?? '';
}

/** The envelope's `input_reference`: exactly one of its two keys (the contract refuses both and neither). */
function referenceOf(reference: NonNullable<VideoFields['input_reference']>): ReferenceSpec {
  const { image_url: imageUrl, file_id: fileId } = reference;
  return imageUrl !== undefined ? { kind: 'image_url', value: imageUrl } : { kind: 'file_id', value: fileId! };
}

/**
 * Maps a createVideo body onto a model's input; what the compat fields break of the model's own terms
 * (its size table, its image input, a field given twice) is reported first, as 400s.
 */
export async function mapVideoRequest(
  raw: VideoFields,
  upload: boolean,
  options: MapOptions,
): Promise<MappedVideoRequest> {
  const issues: FieldIssue[] = [];
  const modelId = raw.model ?? options.defaultModel;
  const model = catalogue.get(modelId);
  if (!model) throw new ApiError('unknown_model', { params: { model: modelId.slice(0, 200) }, param: 'model' });
  const properties = model.info.inputSchema.properties;

  const input: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (COMPAT_FIELDS.has(key)) continue;
    input[key] = options.fromForm ? coerceFormValue(value, properties[key]) : value;
  }
  const renames: Record<string, string> = {};

  if (raw.seconds !== undefined) {
    if ('duration_seconds' in input) issues.push(forbiddenWith('duration_seconds', 'seconds'));
    // "8", " 8 " and 8 are 8: the contract allows whole seconds only, as text or a JSON integer.
    input.duration_seconds = Number(raw.seconds);
    renames['input.duration_seconds'] = 'seconds';
  }

  if (raw.size !== undefined && !model.info.outputSizes) {
    // No size table: the model's frame follows its inputs (an image-to-video model follows the image).
    issues.push(fieldIssue('size', 'unknown_field', 'unknown_field'));
  } else if (raw.size !== undefined) {
    const table = sizeTable(model);
    const given = raw.size.trim().toLowerCase();
    const hit = table.find((row) => row.size === given);
    if (!hit) {
      const sizes = [...new Set(table.map((row) => row.size))].join(', ');
      issues.push(fieldIssue('size', 'enum', 'unknown_size', { size: raw.size.slice(0, 50), sizes }));
    } else {
      for (const field of ['aspect_ratio', 'resolution']) if (field in input) issues.push(forbiddenWith(field, 'size'));
      if (properties.aspect_ratio) input.aspect_ratio = hit.aspectRatio;
      if (properties.resolution) input.resolution = hit.resolution;
      renames['input.aspect_ratio'] = 'size';
      renames['input.resolution'] = 'size';
    }
  }

  let spec: ReferenceSpec | undefined;
  if (upload && raw.input_reference !== undefined) {
    // A file part and bracketed input_reference[...] fields in one form.
    const sent = Object.keys(raw.input_reference)[0];
    issues.push(forbiddenWith(`input_reference.${sent}`, 'input_reference (a file)', 'input_reference'));
  } else if (upload) spec = { kind: 'upload' };
  else if (raw.input_reference !== undefined) spec = referenceOf(raw.input_reference);
  const target = spec ? imageTarget(model) : undefined;
  if (spec && !target) issues.push(fieldIssue('input_reference', 'unknown_field', 'unknown_field'));
  if (spec && target && !target.list && target.field in input)
    issues.push(forbiddenWith(target.field, 'input_reference'));
  if (issues.length) throw invalidInput(issues);

  let reference: ResolvedReference | undefined;
  let shifted: string | undefined;
  if (spec && target) {
    reference = await options.resolveReference(spec);
    if (target.list) {
      const given = input[target.field];
      input[target.field] = [reference.url, ...(Array.isArray(given) ? given : given === undefined ? [] : [given])];
      renames[`input.${target.field}[0]`] = 'input_reference';
      shifted = `input.${target.field}`;
    } else {
      input[target.field] = reference.url;
      renames[`input.${target.field}`] = 'input_reference';
    }
  }

  const rename = (path: string): string => {
    if (renames[path]) return renames[path];
    if (shifted && path.startsWith(`${shifted}[`)) {
      // The caller's own items moved one place down behind input_reference.
      const match = /^\[(\d+)\](.*)$/.exec(path.slice(shifted.length));
      if (match) return `${shifted.slice('input.'.length)}[${Number(match[1]) - 1}]${match[2]}`;
    }
    for (const [from, to] of Object.entries(renames))
      if (path.startsWith(`${from}.`) || path.startsWith(`${from}[`)) return to + path.slice(from.length);
    return path.startsWith('input.') ? path.slice('input.'.length) : path;
  };
  // A rule over the whole input that an input_reference would satisfy ("at least one of ...") names it.
  const imageField = imageTarget(model)?.field;
  const ruleParam = (issue: FieldIssue): string | undefined => {
    const fields = issue.message.params.fields;
    return issue.path === 'input' &&
      imageField &&
      typeof fields === 'string' &&
      fields.split(', ').includes(`input.${imageField}`)
      ? 'input_reference'
      : undefined;
  };
  return { model, body: { model: model.info.id, input }, reference, rename, ruleParam };
}

/** `field` is not accepted when `other` is given (the compat field and its input field, both sent). */
function forbiddenWith(field: string, other: string, path = field): FieldIssue {
  return {
    path,
    rule: 'forbidden',
    message: {
      key: 'rule_forbidden_when',
      params: { field, condition: { key: 'condition_present', params: { field: other } } },
    },
  };
}

/** The validator's problems in the caller's terms: paths and the field names inside messages. */
export function renameIssues(
  error: ApiError,
  { rename, ruleParam }: Pick<MappedVideoRequest, 'rename' | 'ruleParam'>,
): ApiError {
  if (!error.fieldErrors.length) return error;
  const renameRef = (ref: MessageRef): MessageRef => ({
    key: ref.key,
    params: Object.fromEntries(
      Object.entries(ref.params).map(([name, value]) => {
        if (typeof value === 'object') return [name, renameRef(value)];
        if (name === 'field' && typeof value === 'string') return [name, rename(value)];
        if (name === 'fields' && typeof value === 'string') return [name, value.split(', ').map(rename).join(', ')];
        return [name, value];
      }),
    ),
  });
  const issues = error.fieldErrors.map((issue) => ({
    ...issue,
    path: ruleParam(issue) ?? rename(issue.path),
    message: renameRef(issue.message),
  }));
  return new ApiError(error.errorName, {
    params: error.params,
    fieldErrors: issues,
    param: issues[0]?.path ?? error.param,
    headers: error.headers,
  });
}
