import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Ajv } from 'ajv';
import { expandModel, type Shared } from './expand-model.js';
import { checkOutputVocabulary } from './output.js';
import { loadProviders } from './providers.js';
import type { FormatDef } from './field-schema.js';
import { readYaml, type YamlSource } from './read-yaml.js';
import { checkDecisions, checkStates } from './service.js';
import { SpecError, type SpecProblem } from './spec-error.js';
import type {
  Catalogue,
  ErrorCatalogue,
  JsonSchema,
  MarkerStyle,
  Model,
  ModeSpec,
  PricingOption,
  RawModel,
} from './types.js';

export const LANGUAGES = ['en', 'zh-CN', 'zh-TW', 'ja', 'ko', 'de', 'fr', 'es', 'pt-BR', 'ru', 'it', 'pl'];

/** Reads and checks all of spec/ under `root`; throws SpecError listing every problem as file:line. */
export function loadCatalogue(root: string): Catalogue {
  const problems: SpecProblem[] = [];
  const inputs: string[] = [];
  const read = (file: string): YamlSource | undefined => {
    inputs.push(file);
    const { source, problems: found } = readYaml(root, file);
    problems.push(...found);
    return source;
  };

  const fieldsSource = read('spec/shared/fields.yaml');
  const formatsSource = read('spec/shared/formats.yaml');
  const markersSource = read('spec/shared/markers.yaml');
  const sizesSource = read('spec/shared/output-sizes.yaml');
  const optionsSource = read('spec/shared/pricing-options.yaml');
  const modesSource = read('spec/shared/modes.yaml');
  const outputSource = read('spec/shared/output.yaml');
  const errorsSource = read('spec/errors.yaml');
  const openapiSource = read('spec/openapi.yaml');
  const decisionsSource = read('spec/service/decisions.yaml');
  const statesSource = read('spec/service/states.yaml');
  if (problems.length) throw new SpecError(problems);

  const formats = formatsSource!.data as Record<string, FormatDef>;
  const fields = fieldsSource!.data as Record<string, JsonSchema>;
  for (const [name, entry] of Object.entries(fields)) {
    for (const format of formatsIn(entry)) {
      if (!formats[format])
        problems.push(fieldsSource!.problem([name], `unknown format "${format}" (see spec/shared/formats.yaml)`));
    }
  }
  // Marker regexes, like every pattern, were checked as their file was read (patterns.ts).
  const markers = markersSource!.data as Record<string, Omit<MarkerStyle, 'name'>>;
  const pricingOptions: PricingOption[] = Object.entries(
    optionsSource!.data as Record<string, Omit<PricingOption, 'name'>>,
  ).map(([name, o]) => ({ name, ...o }));
  const shared: Shared = {
    fields,
    formats,
    markers,
    outputSizes: sizesSource!.data as Shared['outputSizes'],
    pricingOptions,
    modes: checkModes(modesSource!, fields, problems),
    output: checkOutputVocabulary(outputSource!, (sizesSource!.data as Shared['outputSizes']).standard, problems),
  };

  // Model files: each checked against spec/model.schema.json, then expanded.
  // Read as YAML (JSON is YAML), so that its patterns are checked like those of the other files.
  const schemaSource = read('spec/model.schema.json');
  if (!schemaSource) throw new SpecError(problems);
  const ajv = new Ajv({ allErrors: true, strict: false });
  const checkModelFile = ajv.compile(schemaSource.data as JsonSchema);
  const sources = new Map<string, YamlSource>();
  for (const file of listYaml(root, 'spec/models')) {
    const source = read(file);
    if (!source) continue;
    if (!checkModelFile(source.data)) {
      for (const e of checkModelFile.errors ?? []) {
        if (e.keyword === 'if') continue; // its 'then' errors say what is wrong
        const path = e.instancePath.split('/').slice(1).map(decodePointer);
        const unknownKey =
          e.keyword === 'additionalProperties'
            ? (e.params as { additionalProperty: string }).additionalProperty
            : undefined;
        // Point at the unknown key itself, not at the map that holds it.
        if (unknownKey !== undefined) path.push(unknownKey);
        const extra = unknownKey !== undefined ? ` "${unknownKey}"` : '';
        const allowed =
          e.keyword === 'enum' ? ` (${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')})` : '';
        problems.push(source.problem(path, `${e.instancePath || 'the file'} ${e.message}${extra}${allowed}`));
      }
      continue;
    }
    const model = source.data as RawModel;
    const expected = file.slice('spec/models/'.length, -'.yaml'.length);
    if (model.id !== expected)
      problems.push(source.problem(['id'], `id "${model.id}" does not match the file's path (${expected})`));
    else if (model.extends !== undefined && !/^vendor_/.test(model.extends))
      problems.push(source.problem(['extends'], 'extends must name a model id'));
    sources.set(model.id, source);
  }
  for (const [name, option] of pricingOptions.entries()) {
    if (!option.from && !option.nonEmpty)
      problems.push(optionsSource!.problem([option.name], `option ${name} needs "from" or "nonEmpty"`));
  }
  if (problems.length) throw new SpecError(problems);

  const models = [...sources.values()]
    .filter((s) => !(s.data as RawModel).abstract)
    .map((s) => expandModel((s.data as RawModel).id, sources, shared, problems))
    .filter((m) => m !== undefined)
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const model of models) {
    const replacement = model.deprecated?.replacement;
    if (
      replacement !== undefined &&
      (replacement === model.id ||
        catalogueDeprecated(models, replacement) ||
        !models.some((m) => m.id === replacement))
    ) {
      problems.push(
        sources
          .get(model.id)!
          .problem(
            ['deprecated', 'replacement'],
            `replacement "${replacement}" must be the id of another callable model that is not itself deprecated`,
          ),
      );
    }
  }
  // Field mappings of the upstream protocols (spec/providers/): checked against every model.
  const providers = problems.length ? [] : loadProviders(root, read, models, fields, problems);
  const errors = checkErrors(errorsSource!, problems);
  const serviceDecisions = checkDecisions(decisionsSource!, problems);
  const states = checkStates(statesSource!, problems);
  if (problems.length) throw new SpecError(problems);
  return {
    root,
    models,
    errors,
    openapiBase: openapiSource!.data as JsonSchema,
    pricingOptions,
    output: shared.output,
    serviceDecisions,
    states,
    providers,
    inputs: [...inputs].sort(),
  };
}

/** Whether the named model is itself being retired: a replacement must be current. */
const catalogueDeprecated = (models: Model[], id: string) =>
  models.some((m) => m.id === id && m.deprecated !== undefined);

const MODES = ['text-to-video', 'image-to-video', 'reference-to-video', 'video-extend', 'video-edit'];

/** spec/shared/modes.yaml: one entry per mode, naming dictionary fields only. */
function checkModes(
  source: YamlSource,
  fields: Record<string, JsonSchema>,
  problems: SpecProblem[],
): Record<string, ModeSpec> {
  const modes = (source.data ?? {}) as Record<string, ModeSpec>;
  for (const mode of MODES)
    if (!modes[mode]) problems.push(source.problem([], `modes.yaml needs an entry for ${mode}`));
  for (const [mode, spec] of Object.entries(modes)) {
    if (!MODES.includes(mode)) problems.push(source.problem([mode], `unknown mode "${mode}" (${MODES.join(', ')})`));
    if (typeof spec?.description !== 'string')
      problems.push(source.problem([mode], `mode ${mode} needs a description`));
    for (const key of ['required', 'absent'] as const) {
      (spec?.fields?.[key] ?? []).forEach((name, i) => {
        if (!fields[name])
          problems.push(
            source.problem([mode, 'fields', key, i], `unknown field "${name}": it is not in spec/shared/fields.yaml`),
          );
      });
    }
  }
  return modes;
}

function decodePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

function formatsIn(schema: unknown): string[] {
  if (typeof schema !== 'object' || schema === null) return [];
  const own = typeof (schema as JsonSchema).format === 'string' ? [(schema as JsonSchema).format as string] : [];
  return [...own, ...Object.values(schema).flatMap(formatsIn)];
}

function listYaml(root: string, dir: string): string[] {
  const out: string[] = [];
  const walk = (abs: string) => {
    for (const name of readdirSync(abs).sort()) {
      const path = join(abs, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.yaml')) out.push(relative(root, path).split('\\').join('/'));
    }
  };
  walk(join(root, dir));
  return out.sort();
}

const placeholders = (text: string) =>
  [...text.matchAll(/\{(\w+)\}/g)]
    .map((m) => m[1])
    .sort()
    .join(',');

/** Every message in all 12 languages, with the same placeholders as the English text. */
function checkMessages(
  source: YamlSource,
  path: (string | number)[],
  messages: unknown,
  problems: SpecProblem[],
): Record<string, string> {
  if (typeof messages !== 'object' || messages === null) {
    problems.push(source.problem(path, 'expected a map of language to message'));
    return {};
  }
  const table = messages as Record<string, string>;
  for (const lang of LANGUAGES) {
    if (typeof table[lang] !== 'string' || table[lang].length === 0)
      problems.push(source.problem(path, `missing the ${lang} message`));
    else if (placeholders(table[lang]) !== placeholders(table.en ?? '')) {
      problems.push(
        source.problem(
          [...path, lang],
          `placeholders differ from the English message (${placeholders(table.en ?? '')})`,
        ),
      );
    }
  }
  for (const lang of Object.keys(table))
    if (!LANGUAGES.includes(lang)) problems.push(source.problem([...path, lang], `unknown language ${lang}`));
  return Object.fromEntries(LANGUAGES.map((l) => [l, table[l]]));
}

function checkErrors(source: YamlSource, problems: SpecProblem[]): ErrorCatalogue {
  const data = source.data as Record<string, Record<string, unknown>>;
  const codes: ErrorCatalogue['codes'] = [];
  for (const [key, entry] of Object.entries(data.codes ?? {})) {
    const e = entry as { name: string; http: number; messages: unknown };
    if (!/^[1-5]\d{4}$/.test(key) || Number(key.slice(0, 3)) !== e.http) {
      problems.push(
        source.problem(['codes', key], `code ${key} must have 5 digits starting with its HTTP status ${e.http}`),
      );
    }
    codes.push({
      code: Number(key),
      name: e.name,
      http: e.http,
      messages: checkMessages(source, ['codes', key, 'messages'], e.messages, problems),
    });
  }
  const section = (name: string) =>
    Object.fromEntries(
      Object.entries(data[name] ?? {}).map(([key, messages]) => [
        key,
        checkMessages(source, [name, key], messages, problems),
      ]),
    );
  return {
    languages: LANGUAGES,
    codes: codes.sort((a, b) => a.code - b.code),
    validation: section('validation'),
    taskErrors: section('taskErrors'),
    warnings: section('warnings'),
  };
}
