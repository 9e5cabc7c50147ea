import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { checkProfile, PROFILE_KEYS, type ProviderProfile } from './profile.js';
import type { YamlSource } from './read-yaml.js';
import type { SpecProblem } from './spec-error.js';
import type { JsonSchema, Model, Scalar } from './types.js';

/** The upstream protocols a coded adapter exists for; a mapping file is named after one, or is a profile (it has `submit`). */
export const PROVIDER_PROTOCOLS = ['openai-videos', 'jobs', 'fal-queue', 'replicate'] as const;
export type ProviderProtocol = (typeof PROVIDER_PROTOCOLS)[number];

const CONVERSIONS = ['string', 'number', 'integer', 'boolean'] as const;

/**
 * How one catalogue field is sent to a provider: under another name (`to`, a dot path nests it),
 * converted (`as`), each value replaced (`values`, keyed by the catalogue value as text), never
 * sent (`drop`), or not taken at all (`unsupported`: the provider has no counterpart, so a request
 * that sets the field to anything but the model's default is not sent there).
 */
export interface ProviderField {
  to?: string;
  as?: (typeof CONVERSIONS)[number];
  values?: Record<string, Scalar>;
  drop?: true;
  unsupported?: true;
}

/** A model's own part of a provider's mapping: fields over the shared ones, constants, where the result is, how much it serves. */
export interface ProviderModel {
  fields: Record<string, ProviderField>;
  set: Record<string, unknown>;
  result?: string;
  /** all: every request the catalogue accepts maps; subset: some values do not (listed in `unmapped`); none: the protocol cannot run the model. */
  serves: 'all' | 'subset' | 'none';
}

/** spec/providers/<protocol>.yaml, checked against every model of the catalogue. */
export interface ProviderMapping {
  /** A coded protocol, or the name of a profile (its file's name). */
  protocol: string;
  /** The whole protocol as data (a file with `submit`): one runtime adapter executes it. */
  profile?: ProviderProfile;
  file: string;
  summary: string;
  fields: Record<string, ProviderField>;
  /** pass: a field the mapping does not name is sent under its own name; declared: every field a model has must be named. */
  otherFields: 'pass' | 'declared';
  set: Record<string, unknown>;
  /** Dot path of the media link in the provider's result, for protocols whose result is JSON (fal, Replicate). */
  result?: string;
  /**
   * How a task's external references reach the provider: `stored` (the default), signed links to
   * the copies the service fetched and measured; `original`, the customer's URLs, for a provider
   * that must fetch them itself (issue 37 point 3).
   */
  references: 'stored' | 'original';
  models: Record<string, ProviderModel>;
  /** Per model id, per field: the values the model accepts that have no provider value (serves: subset). */
  unmapped: Record<string, Record<string, Scalar[]>>;
  /** Per model id, per field the provider does not take (`unsupported`): the model's default, the one value sent as nothing. */
  unsupported: Record<string, Record<string, { default?: unknown }>>;
  /** Per model id the protocol cannot run, why: derived (a required field it lacks, a mode it has no path for) or said (`serves: none`). */
  notServed: Record<string, NotServed>;
}

/**
 * Why a protocol cannot run a model. Derived by the generator, so that adding a model is one file:
 * `field`, a field every request of the model carries and the provider does not take
 * (`unsupported`); `mode`, a profile whose submit has a path per mode and none for the model's;
 * `declared`, the file says `serves: none` of a model it could otherwise map.
 */
export type NotServed = { field: string } | { mode: string } | { declared: true };

/** The reason as one English sentence (generated docs, deployments check, the refusal of a route). */
export function notServedText(file: string, reason: NotServed): string {
  if ('field' in reason) return `it requires ${reason.field}, which ${file} does not take (unsupported)`;
  if ('mode' in reason) return `${file} has no submit path for mode ${reason.mode}`;
  return `${file} says serves: none`;
}

const TOP_KEYS = ['protocol', 'summary', 'fields', 'otherFields', 'set', 'result', 'references', 'models'];
const MODEL_KEYS = ['fields', 'set', 'result', 'serves'];
const FIELD_KEYS = ['to', 'as', 'values', 'drop', 'unsupported'];
const PROFILE_NAME = /^[a-z][a-z0-9-]{0,40}$/;
const TARGET = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;
/** A numeric range is enumerated for a `values` check only when it is this small. */
const MAX_ENUMERATED = 1000;

/** Reads and checks every spec/providers/*.yaml; problems go to `problems` as file:line:col. */
export function loadProviders(
  root: string,
  read: (file: string) => YamlSource | undefined,
  models: Model[],
  dictionary: Record<string, JsonSchema>,
  problems: SpecProblem[],
): ProviderMapping[] {
  const dir = join(root, 'spec/providers');
  if (!existsSync(dir)) return [];
  const out: ProviderMapping[] = [];
  for (const name of readdirSync(dir)
    .filter((n) => n.endsWith('.yaml'))
    .sort()) {
    const source = read(`spec/providers/${name}`);
    if (!source) continue;
    const mapping = checkProvider(source, name.slice(0, -'.yaml'.length), models, dictionary, problems);
    if (mapping) out.push(mapping);
  }
  return out;
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

type Problem = (path: (string | number)[], message: string) => void;

/**
 * One spec/providers file, section by section: the top keys (checkHeader), the profile's own
 * sections (profile.ts), `fields` and `set`, `models` (checkModelSections); then every model of the
 * catalogue against the merged mapping (checkCoverage) and every mapped value against the models
 * that accept it (checkMappedValues). Undefined when the file has a problem.
 */
function checkProvider(
  source: YamlSource,
  base: string,
  models: Model[],
  dictionary: Record<string, JsonSchema>,
  problems: SpecProblem[],
): ProviderMapping | undefined {
  const problem: Problem = (path, message) => problems.push(source.problem(path, message));
  const data = source.data;
  if (!isMap(data)) {
    problem([], 'a provider mapping is a map (protocol, fields, otherFields, ...)');
    return undefined;
  }
  const before = problems.length;
  const isProfile = data.submit !== undefined;
  const { protocol, otherFields, references } = checkHeader(data, base, isProfile, problem);
  const profile = isProfile ? checkProfile(data, dictionary, problem) : undefined;
  const fields = checkFields(
    data.fields,
    ['fields'],
    (name) => (dictionary[name] ? undefined : `unknown field "${name}": it is not in spec/shared/fields.yaml`),
    problem,
  );
  const set = checkSet(data.set, ['set'], problem);
  const byId = new Map(models.map((m) => [m.id, m]));
  const own = checkModelSections(data.models, byId, problem);
  if (problems.length > before) return undefined;

  const shared = { fields, set, otherFields, own, profile };
  const unmapped: Record<string, Record<string, Scalar[]>> = {};
  const unsupported: Record<string, Record<string, { default?: unknown }>> = {};
  const notServed: Record<string, NotServed> = {};
  for (const model of models) {
    const coverage = checkCoverage(model, shared, problem);
    if ('notServed' in coverage) {
      notServed[model.id] = coverage.notServed;
      continue;
    }
    if (Object.keys(coverage.unsupported).length) unsupported[model.id] = coverage.unsupported;
    if (coverage.unmapped) unmapped[model.id] = coverage.unmapped;
  }
  checkMappedValues(fields, own, models, byId, problem);
  if (problems.length > before) return undefined;
  return {
    protocol: protocol as string,
    ...(profile ? { profile } : {}),
    file: source.file,
    summary: data.summary as string,
    fields,
    otherFields,
    set,
    ...(typeof data.result === 'string' && !isProfile ? { result: data.result } : {}),
    references,
    models: own,
    unmapped,
    unsupported,
    notServed,
  };
}

/** The top keys: which are allowed, `protocol` (a coded one, or a profile's own name, matching the file), `summary`, `otherFields`, `result`. */
function checkHeader(
  data: Record<string, unknown>,
  base: string,
  isProfile: boolean,
  problem: Problem,
): { protocol: unknown; otherFields: ProviderMapping['otherFields']; references: ProviderMapping['references'] } {
  const keys = isProfile ? [...TOP_KEYS, ...PROFILE_KEYS] : TOP_KEYS;
  for (const key of Object.keys(data))
    if (!keys.includes(key)) problem([key], `unknown key "${key}" (${keys.join(', ')})`);
  const protocol = data.protocol;
  if (isProfile && (typeof protocol !== 'string' || !PROFILE_NAME.test(protocol)))
    problem(['protocol'], "protocol must be the profile's name: lower-case letters, digits and -");
  else if (isProfile && (PROVIDER_PROTOCOLS as readonly unknown[]).includes(protocol))
    problem(['protocol'], `${String(protocol)} is a coded protocol: a profile needs another name`);
  else if (!isProfile && !(PROVIDER_PROTOCOLS as readonly unknown[]).includes(protocol))
    problem(
      ['protocol'],
      `protocol must be one of ${PROVIDER_PROTOCOLS.join(', ')} (or the file is a profile: it needs a submit section)`,
    );
  if (protocol !== base && typeof protocol === 'string')
    problem(['protocol'], `the file of protocol ${String(protocol)} must be named ${String(protocol)}.yaml`);
  if (typeof data.summary !== 'string' || data.summary.length === 0)
    problem(['summary'], 'summary must say in a sentence what the protocol is');
  const otherFields = data.otherFields ?? 'pass';
  if (otherFields !== 'pass' && otherFields !== 'declared')
    problem(['otherFields'], 'otherFields must be pass or declared');
  if (!isProfile && data.result !== undefined && (typeof data.result !== 'string' || !TARGET.test(data.result)))
    problem(['result'], 'result must be a dot path (video.url)');
  const references = data.references ?? 'stored';
  if (references !== 'stored' && references !== 'original')
    problem(
      ['references'],
      "references must be stored (the provider is sent signed links to the service's measured copies) or original (the customer's URLs)",
    );
  return {
    protocol,
    otherFields: otherFields as ProviderMapping['otherFields'],
    references: references as ProviderMapping['references'],
  };
}

/** The `models` section: each a callable model of the catalogue, with its own fields, set, result and serves. */
function checkModelSections(raw: unknown, byId: Map<string, Model>, problem: Problem): Record<string, ProviderModel> {
  const own: Record<string, ProviderModel> = {};
  if (raw !== undefined && !isMap(raw)) problem(['models'], 'models must be a map of model id to its mapping');
  for (const [id, section] of Object.entries(isMap(raw) ? raw : {})) {
    const at = ['models', id];
    const model = byId.get(id);
    if (!model) {
      problem(at, `unknown model "${id}": not a callable model of spec/models`);
      continue;
    }
    if (!isMap(section)) {
      problem(at, 'a model mapping is a map (fields, set, result, serves)');
      continue;
    }
    for (const key of Object.keys(section))
      if (!MODEL_KEYS.includes(key)) problem([...at, key], `unknown key "${key}" (${MODEL_KEYS.join(', ')})`);
    const serves = section.serves ?? 'all';
    if (serves !== 'all' && serves !== 'subset' && serves !== 'none')
      problem([...at, 'serves'], 'serves must be all, subset or none');
    if (section.result !== undefined && (typeof section.result !== 'string' || !TARGET.test(section.result)))
      problem([...at, 'result'], 'result must be a dot path (video.url)');
    const names = new Set(model.fields.map((f) => f.name));
    own[id] = {
      fields: checkFields(
        section.fields,
        [...at, 'fields'],
        (name) => (names.has(name) ? undefined : `model ${id} has no field "${name}"`),
        problem,
      ),
      set: checkSet(section.set, [...at, 'set'], problem),
      ...(typeof section.result === 'string' ? { result: section.result } : {}),
      serves: serves as ProviderModel['serves'],
    };
  }
  return own;
}

/** The checked sections a model is held against. */
interface MappingSections {
  fields: Record<string, ProviderField>;
  set: Record<string, unknown>;
  otherFields: ProviderMapping['otherFields'];
  own: Record<string, ProviderModel>;
  profile: ProviderProfile | undefined;
}

/**
 * One model against the merged mapping: whether the protocol can run it at all (derivedNotServed,
 * else `serves: none`); then what each of its fields is sent as (no two under one name, none both
 * set and sent, a required one not dropped, each conversion possible) and whether every value it
 * accepts maps.
 */
function checkCoverage(
  model: Model,
  sections: MappingSections,
  problem: Problem,
):
  | { unmapped?: Record<string, Scalar[]>; unsupported: Record<string, { default?: unknown }> }
  | { notServed: NotServed } {
  const local = sections.own[model.id];
  const derived = derivedNotServed(model, sections);
  if (derived) {
    // The file lists no model unless it maps one: what the generator derives is not said again.
    if (local)
      problem(
        ['models', model.id],
        `model ${model.id} is not served by this protocol anyway (${notServedText('this file', derived)}): leave it out of models`,
      );
    return { notServed: derived };
  }
  if (local?.serves === 'none') return { notServed: { declared: true } };
  return checkMappedFields(model, sections, problem);
}

/** Why the protocol cannot run the model whatever the request: a required field it does not take, a mode it has no path for. */
function derivedNotServed(model: Model, { fields, own, profile }: MappingSections): NotServed | undefined {
  // A profile whose submit has a path per mode does not serve the models of the other modes.
  const paths = profile?.submit.path;
  if (paths !== undefined && typeof paths !== 'string' && !Object.hasOwn(paths, model.mode))
    return { mode: model.mode };
  const merged = { ...fields, ...(own[model.id]?.fields ?? {}) };
  // Every request carries a required field: a protocol that does not take it can run none of them.
  const lacking = model.fields.find((f) => f.required && merged[f.name]?.unsupported);
  return lacking ? { field: lacking.name } : undefined;
}

/** A model the protocol can run: each field's mapping checked, and the values that do not map. */
function checkMappedFields(
  model: Model,
  { fields, set, otherFields, own }: MappingSections,
  problem: Problem,
): { unmapped?: Record<string, Scalar[]>; unsupported: Record<string, { default?: unknown }> } {
  const local = own[model.id];
  const merged = { ...fields, ...(local?.fields ?? {}) };
  const where = (field: string) =>
    local?.fields[field]
      ? ['models', model.id, 'fields', field]
      : fields[field]
        ? ['fields', field]
        : local
          ? ['models', model.id]
          : ['otherFields'];
  const targets = new Map<string, string>();
  const missing: Record<string, Scalar[]> = {};
  const unsupported: Record<string, { default?: unknown }> = {};
  for (const field of model.fields) {
    const mapping = merged[field.name];
    if (!mapping) {
      if (otherFields === 'declared')
        problem(
          where(field.name),
          `model ${model.id} has field "${field.name}", which this mapping does not name (otherFields: declared): map it or drop it`,
        );
      else claim(targets, field.name, field.name, model.id, where(field.name), problem);
      continue;
    }
    if (mapping.drop) {
      if (field.required)
        problem(where(field.name), `field "${field.name}" is required on model ${model.id}: it cannot be dropped`);
      continue;
    }
    if (mapping.unsupported) {
      // Declared, so the model is served in part without saying so again (a required one: derivedNotServed).
      const schema = (model.inputSchema.properties as Record<string, JsonSchema>)[field.name];
      unsupported[field.name] = schema && 'default' in schema ? { default: schema.default } : {};
      continue;
    }
    claim(targets, mapping.to ?? field.name, field.name, model.id, where(field.name), problem);
    const schema = (model.inputSchema.properties as Record<string, JsonSchema>)[field.name];
    if (mapping.as) {
      const kind = scalarKind(schema);
      const fits =
        mapping.as === 'string'
          ? kind !== undefined
          : mapping.as === 'boolean'
            ? kind === 'boolean'
            : kind === 'number' || kind === 'integer';
      if (!fits && !mapping.values)
        problem(
          [...where(field.name), 'as'],
          `field "${field.name}" of model ${model.id} (${kind ?? 'not a single value'}) cannot be sent as ${mapping.as}`,
        );
    }
    if (mapping.values) {
      const accepted = acceptedValues(schema);
      if (accepted === undefined) {
        problem(
          [...where(field.name), 'values'],
          `field "${field.name}" of model ${model.id} takes too many values to map one by one`,
        );
        continue;
      }
      const lost = accepted.filter((value) => !(String(value) in mapping.values!));
      if (lost.length) missing[field.name] = lost;
    }
  }
  for (const key of Object.keys({ ...set, ...(local?.set ?? {}) })) {
    if (targets.has(key))
      problem(
        local?.set[key] !== undefined ? ['models', model.id, 'set', key] : ['set', key],
        `"${key}" is both set and the name of field "${targets.get(key)}" on model ${model.id}`,
      );
  }
  if (Object.keys(missing).length === 0) return { unsupported };
  // Values without a provider value make the model served in part, derived like the rest (one file per model);
  // a model the file marks `serves: all` says every value maps, and is held to it.
  if (local?.serves !== 'all') return { unmapped: missing, unsupported };
  const [field, values] = Object.entries(missing)[0];
  problem(
    [...where(field), 'values'],
    `model ${model.id} accepts ${field} ${values.map((v) => JSON.stringify(v)).join(', ')}, which this mapping has no value for: map them, or leave out serves: all (the model is then served in part)`,
  );
  return { unsupported };
}

/** A value mapped that no model accepts is a typo waiting to happen: in the shared fields, and in each model's own. */
function checkMappedValues(
  fields: Record<string, ProviderField>,
  own: Record<string, ProviderModel>,
  models: Model[],
  byId: Map<string, Model>,
  problem: Problem,
): void {
  for (const [field, mapping] of Object.entries(fields)) {
    if (!mapping.values) continue;
    const everywhere = new Set(
      models.flatMap((m) =>
        (acceptedValues((m.inputSchema.properties as Record<string, JsonSchema>)[field]) ?? []).map(String),
      ),
    );
    for (const key of Object.keys(mapping.values))
      if (!everywhere.has(key)) problem(['fields', field, 'values', key], `no model accepts ${field} "${key}"`);
  }
  for (const [id, local] of Object.entries(own)) {
    const model = byId.get(id)!;
    for (const [field, mapping] of Object.entries(local.fields)) {
      const accepted = new Set(
        (acceptedValues((model.inputSchema.properties as Record<string, JsonSchema>)[field]) ?? []).map(String),
      );
      for (const key of Object.keys(mapping.values ?? {}))
        if (!accepted.has(key))
          problem(['models', id, 'fields', field, 'values', key], `model ${id} does not accept ${field} "${key}"`);
    }
  }
}

/** Two fields sent under one name would overwrite each other. */
function claim(
  targets: Map<string, string>,
  target: string,
  field: string,
  modelId: string,
  at: (string | number)[],
  problem: (path: (string | number)[], message: string) => void,
) {
  const other = targets.get(target);
  if (other !== undefined)
    problem(at, `fields "${other}" and "${field}" of model ${modelId} would both be sent as "${target}"`);
  else targets.set(target, field);
}

function checkFields(
  raw: unknown,
  at: (string | number)[],
  unknown: (name: string) => string | undefined,
  problem: (path: (string | number)[], message: string) => void,
): Record<string, ProviderField> {
  if (raw === undefined) return {};
  if (!isMap(raw)) {
    problem(at, 'fields must be a map of field name to its mapping');
    return {};
  }
  const out: Record<string, ProviderField> = {};
  for (const [name, value] of Object.entries(raw)) {
    const here = [...at, name];
    const wrong = unknown(name);
    if (wrong) {
      problem(here, wrong);
      continue;
    }
    // `prompt: text` is short for `prompt: { to: text }`.
    const entry = typeof value === 'string' ? { to: value } : value;
    if (!isMap(entry)) {
      problem(here, 'a field mapping is a name or a map (to, as, values, drop)');
      continue;
    }
    for (const key of Object.keys(entry))
      if (!FIELD_KEYS.includes(key)) problem([...here, key], `unknown key "${key}" (${FIELD_KEYS.join(', ')})`);
    if (entry.to !== undefined && (typeof entry.to !== 'string' || !TARGET.test(entry.to)))
      problem([...here, 'to'], 'to must be a field name or a dot path (image.url)');
    if (entry.as !== undefined && !(CONVERSIONS as readonly unknown[]).includes(entry.as))
      problem([...here, 'as'], `as must be one of ${CONVERSIONS.join(', ')}`);
    if (entry.drop !== undefined && entry.drop !== true) problem([...here, 'drop'], 'drop must be true (or left out)');
    if (entry.drop === true && Object.keys(entry).length > 1)
      problem([...here, 'drop'], 'a dropped field takes no other key');
    if (entry.unsupported !== undefined && entry.unsupported !== true)
      problem([...here, 'unsupported'], 'unsupported must be true (or left out)');
    if (entry.unsupported === true && Object.keys(entry).length > 1)
      problem([...here, 'unsupported'], 'an unsupported field takes no other key');
    if (entry.values !== undefined) {
      if (!isMap(entry.values) || Object.keys(entry.values).length === 0)
        problem([...here, 'values'], 'values must map each catalogue value to the provider value');
      else
        for (const [key, to] of Object.entries(entry.values))
          if (!['string', 'number', 'boolean'].includes(typeof to))
            problem([...here, 'values', key], 'a provider value is a string, a number or a boolean');
    }
    out[name] = {
      ...(typeof entry.to === 'string' ? { to: entry.to } : {}),
      ...(entry.as !== undefined ? { as: entry.as as ProviderField['as'] } : {}),
      ...(isMap(entry.values) ? { values: entry.values as Record<string, Scalar> } : {}),
      ...(entry.drop === true ? { drop: true as const } : {}),
      ...(entry.unsupported === true ? { unsupported: true as const } : {}),
    };
  }
  return out;
}

function checkSet(
  raw: unknown,
  at: (string | number)[],
  problem: (path: (string | number)[], message: string) => void,
): Record<string, unknown> {
  if (raw === undefined) return {};
  if (!isMap(raw)) {
    problem(at, 'set must be a map of provider field to a constant value');
    return {};
  }
  for (const key of Object.keys(raw))
    if (!TARGET.test(key)) problem([...at, key], 'a set key is a field name or a dot path');
  return raw;
}

/** string, number, integer or boolean for a field of one value; undefined for arrays and objects. */
function scalarKind(schema: JsonSchema | undefined): string | undefined {
  if (!schema) return undefined;
  if (Array.isArray(schema.enum)) return typeof schema.enum[0] === 'number' ? 'number' : typeof schema.enum[0];
  if (Array.isArray(schema.anyOf)) return 'integer';
  const type = schema.type;
  return type === 'string' || type === 'number' || type === 'integer' || type === 'boolean' ? type : undefined;
}

/** Every value a field can take, when they can be listed: an enum, booleans, or a small integer range (with its auto value). */
export function acceptedValues(schema: JsonSchema | undefined): Scalar[] | undefined {
  if (!schema) return undefined;
  if (Array.isArray(schema.enum)) return schema.enum as Scalar[];
  if (schema.type === 'boolean') return [true, false];
  const ranges = Array.isArray(schema.anyOf) ? (schema.anyOf as JsonSchema[]) : [schema];
  const values: Scalar[] = [];
  for (const range of ranges) {
    if (range.const !== undefined) values.push(range.const as Scalar);
    else if (
      typeof range.minimum === 'number' &&
      typeof range.maximum === 'number' &&
      (schema.type === 'integer' || range.type === 'integer' || Array.isArray(schema.anyOf))
    ) {
      if (range.maximum - range.minimum > MAX_ENUMERATED) return undefined;
      for (let v = range.minimum; v <= range.maximum; v++) values.push(v);
    } else return undefined;
  }
  return values;
}
