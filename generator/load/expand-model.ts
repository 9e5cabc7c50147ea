import { fieldSchema, isObject, type FormatDef } from './field-schema.js';
import { mergeModel, ruleList, rulePath } from './merge.js';
import { checkModeContract, checkSourceClip } from './modes.js';
import { expandOutput } from './output.js';
import type { YamlSource } from './read-yaml.js';
import type { SpecProblem } from './spec-error.js';
import type {
  JsonSchema,
  MarkerStyle,
  ModeSpec,
  Model,
  ModelField,
  OutputVocabulary,
  PricingOption,
  RawModel,
  Rule,
  Scalar,
} from './types.js';

export interface Shared {
  fields: Record<string, JsonSchema>;
  formats: Record<string, FormatDef>;
  markers: Record<string, Omit<MarkerStyle, 'name'>>;
  outputSizes: Record<string, Record<string, Record<string, string>>>;
  pricingOptions: PricingOption[];
  modes: Record<string, ModeSpec>;
  output: OutputVocabulary;
}

export { mergeModel } from './merge.js';

/** Reports a problem at a path of the model, in the first file of its chain that writes the path. */
type At = (path: (string | number)[], message: string) => void;

/**
 * Expands one callable model: follows `extends`, resolves the shared material and checks that it
 * all fits, one YAML section at a time (extends, fields, the mode's contract, markers, outputSizes
 * and output, rules, pricing), then builds the model.
 */
export function expandModel(
  id: string,
  sources: Map<string, YamlSource>,
  shared: Shared,
  problems: SpecProblem[],
): Model | undefined {
  const chain = extendsChain(id, sources, problems);
  if (!chain) return undefined;
  let merged: Record<string, unknown> = {};
  for (const source of [...chain].reverse()) merged = mergeModel(merged, source.data as Record<string, unknown>);
  const raw = { ...merged, id, rules: ruleList(merged.rules) } as RawModel;
  // Report a problem at the first file in the chain (own file first) that writes the path.
  const at: At = (path, message) => {
    const owner = chain.find((s) => hasPath(s.data, path)) ?? chain[0];
    problems.push(owner.problem(path, message));
  };
  const before = problems.length;

  for (const key of ['title', 'summary', 'markers'] as const) {
    if (!raw[key]) at([], `a callable model needs "${key}" (write it here or in the model it extends)`);
  }
  if (!raw.fields || Object.keys(raw.fields).length === 0) at([], 'a callable model needs "fields"');
  if (!raw.pricing?.rates?.length) at([], 'a callable model needs "pricing.rates"');
  if (problems.length > before) return undefined;

  const [vendor, familyVersion, mode] = id.split('/');
  const patternMessages: Record<string, string> = {};
  const fields = expandFields(raw, shared, patternMessages, at);
  const byName = new Map(fields.map((f) => [f.name, f]));
  const modeSpec = shared.modes[mode];
  const absentFields = (modeSpec?.fields?.absent ?? []).map((name) => ({
    name,
    required: false,
    schema: fieldSchema(name, shared.fields[name], {}, shared.formats, {}),
    reference: shared.fields[name].reference as string | undefined,
  }));
  checkModeContract(mode, modeSpec, byName, raw.pricing?.sourceClip, at);
  checkSourceClip(raw.pricing?.sourceClip, byName, at);

  const markers = shared.markers[raw.markers!];
  if (!markers) at(['markers'], `unknown marker style "${raw.markers}": it is not in spec/shared/markers.yaml`);
  const outputSizes = expandOutputSizes(raw, shared, fields, at);
  const output = expandOutput(
    raw.output,
    byName,
    outputSizes?.table,
    shared.outputSizes.standard ?? {},
    shared.output,
    at,
  );

  const rules = raw.rules ?? [];
  checkRules(rules, chain, byName, at, problems);

  const pricing = expandPricing(raw, byName, shared.pricingOptions, at);
  const clips = raw.pricing?.referenceClips;
  if (clips && byName.get(clips.field)?.reference !== 'video') {
    at(['pricing', 'referenceClips', 'field'], `referenceClips.field must name a reference video field of this model`);
  }
  if (problems.length > before || !pricing || !markers || !output) return undefined;

  return {
    id,
    vendor,
    family: familyVersion,
    mode,
    modeDescription: modeSpec!.description,
    sources: chain.map((s) => s.file),
    title: raw.title!,
    summary: raw.summary!,
    markers: { name: raw.markers!, ...markers },
    outputSizes,
    fields,
    absentFields,
    inputSchema: inputSchemaOf(fields),
    patternMessages,
    references: raw.references ?? {},
    rules,
    pricing: { ...pricing, referenceClips: clips, sourceClip: raw.pricing?.sourceClip },
    ...(raw.deprecated ? { deprecated: raw.deprecated } : {}),
    output,
    notes: [...(raw.notes ?? []), ...(modeSpec!.notes ?? [])],
    decisions: [...(raw.decisions ?? []), ...(modeSpec!.decisions ?? [])],
    assumptions: [
      ...(raw.assumptions ?? []),
      ...(modeSpec!.assumptions ?? []),
      ...(output.frameRatePublished ? [] : [frameRateAssumption(shared.output)]),
    ],
  };
}

/** `extends`: the model's file, then each file it extends, in order; undefined on an unknown name or a cycle. */
function extendsChain(id: string, sources: Map<string, YamlSource>, problems: SpecProblem[]): YamlSource[] | undefined {
  const chain: YamlSource[] = [];
  for (let at: string | undefined = id; at !== undefined; ) {
    const source = sources.get(at);
    if (!source) {
      const child = chain[chain.length - 1];
      problems.push(child.problem(['extends'], `extends names an unknown model: ${at}`));
      return undefined;
    }
    if (chain.includes(source)) {
      problems.push(
        source.problem(['extends'], `extends forms a cycle: ${chain.map((s) => (s.data as RawModel).id).join(' -> ')}`),
      );
      return undefined;
    }
    chain.push(source);
    at = (source.data as RawModel).extends;
  }
  return chain;
}

/** `fields`: each a field of the dictionary with the model's override, as a JSON Schema; its default and range checked. */
function expandFields(raw: RawModel, shared: Shared, patternMessages: Record<string, string>, at: At): ModelField[] {
  const fields: ModelField[] = [];
  for (const [name, override] of Object.entries(raw.fields ?? {})) {
    const dictionary = shared.fields[name];
    if (!dictionary) {
      at(['fields', name], `unknown field "${name}": it is not in spec/shared/fields.yaml`);
      continue;
    }
    const o = override ?? {};
    const schema = fieldSchema(name, dictionary, o, shared.formats, patternMessages);
    checkDefault(name, schema, o.auto, (m) => at(['fields', name], m));
    if (o.min !== undefined && o.max !== undefined && o.min > o.max)
      at(['fields', name, 'min'], `min ${o.min} is above max ${o.max}`);
    const format = typeof dictionary.format === 'string' ? dictionary.format : undefined;
    fields.push({
      name,
      required: o.required === true,
      schema,
      reference: dictionary.reference as string | undefined,
      format,
      auto: o.auto,
    });
  }
  return fields;
}

/** `outputSizes`: a named table of spec/shared/output-sizes.yaml, else the standard one for the model's fields. */
function expandOutputSizes(raw: RawModel, shared: Shared, fields: ModelField[], at: At): Model['outputSizes'] {
  if (raw.outputSizes === undefined) return standardSizes(shared.outputSizes.standard, fields);
  const table = shared.outputSizes[raw.outputSizes];
  if (!table) {
    at(['outputSizes'], `unknown output-size table "${raw.outputSizes}"`);
    return undefined;
  }
  return { name: raw.outputSizes, table };
}

/** `rules`: each names fields and values the model has, and no file of the chain uses a rule id twice. */
function checkRules(
  rules: Rule[],
  chain: YamlSource[],
  byName: Map<string, ModelField>,
  at: At,
  problems: SpecProblem[],
): void {
  for (const rule of rules) checkRule(rule, byName, (path, m) => at([...rulePath(chain, rule.id), ...path], m));
  for (const source of chain) {
    const own = (source.data as RawModel).rules;
    if (!Array.isArray(own)) continue;
    const ids = new Set<string>();
    own.forEach((rule, i) => {
      if (ids.has(rule.id)) problems.push(source.problem(['rules', i, 'id'], `rule id "${rule.id}" is used twice`));
      ids.add(rule.id);
    });
  }
}

/** The model's input as one JSON Schema: its fields, nothing else. */
function inputSchemaOf(fields: ModelField[]): JsonSchema {
  const required = fields.filter((f) => f.required).map((f) => f.name);
  return {
    type: 'object',
    additionalProperties: false,
    ...(required.length ? { required } : {}),
    properties: Object.fromEntries(fields.map((f) => [f.name, f.schema])),
  };
}

/** The assumption a model without a published frame rate carries (spec/shared/output.yaml). */
function frameRateAssumption(vocabulary: OutputVocabulary) {
  return {
    what: `Frame rate: ${vocabulary.frameRate.value} frames per second (the specification publishes none for this model).`,
    reason: vocabulary.frameRate.reason.trim(),
  };
}

/** The standard table restricted to the model's aspect ratios and resolutions (none without both enums). */
function standardSizes(
  standard: Record<string, Record<string, string>> | undefined,
  fields: ModelField[],
): Model['outputSizes'] {
  const ratios = fields.find((f) => f.name === 'aspect_ratio')?.schema.enum as string[] | undefined;
  const resolutions = fields.find((f) => f.name === 'resolution')?.schema.enum as string[] | undefined;
  if (!standard || !ratios || !resolutions) return undefined;
  const table: Record<string, Record<string, string>> = {};
  for (const ratio of ratios) {
    const row = standard[ratio];
    if (!row) continue;
    const cells = Object.fromEntries(resolutions.filter((r) => row[r]).map((r) => [r, row[r]]));
    if (Object.keys(cells).length) table[ratio] = cells;
  }
  return Object.keys(table).length ? { name: 'standard', table } : undefined;
}

function hasPath(data: unknown, path: (string | number)[]): boolean {
  let node = data;
  for (const segment of path) {
    if (!isObject(node) && !Array.isArray(node)) return false;
    node = (node as Record<string | number, unknown>)[segment];
    if (node === undefined) return false;
  }
  return true;
}

function checkDefault(name: string, schema: JsonSchema, auto: number | undefined, report: (m: string) => void) {
  const value = schema.default;
  if (value === undefined) return;
  const allowed = schema.enum as Scalar[] | undefined;
  if (allowed && !allowed.includes(value as Scalar))
    report(`default ${JSON.stringify(value)} of ${name} is not one of its values`);
  if (typeof value === 'number' && value !== auto) {
    const range = (schema.anyOf as JsonSchema[] | undefined)?.[1] ?? schema;
    if (typeof range.minimum === 'number' && value < range.minimum)
      report(`default ${value} of ${name} is below its minimum`);
    if (typeof range.maximum === 'number' && value > range.maximum)
      report(`default ${value} of ${name} is above its maximum`);
  }
}

function valuesOf(field: ModelField | undefined): Scalar[] | undefined {
  if (!field) return undefined;
  if (Array.isArray(field.schema.enum)) return field.schema.enum as Scalar[];
  if (field.schema.type === 'boolean') return [true, false];
  return undefined;
}

function checkRule(
  rule: Rule,
  fields: Map<string, ModelField>,
  report: (path: (string | number)[], m: string) => void,
) {
  const need = (name: string, path: (string | number)[]) => {
    if (!fields.has(name)) report(path, `rule "${rule.id}" names "${name}", which this model does not accept`);
  };
  switch (rule.kind) {
    case 'atLeastOne':
    case 'maxTotalItems':
      for (const [i, f] of rule.fields.entries()) need(f, ['fields', i]);
      break;
    case 'valueWhen': {
      need(rule.field, ['field']);
      const allowed = valuesOf(fields.get(rule.field));
      rule.values.forEach((v, i) => {
        if (allowed && !allowed.includes(v))
          report(['values', i], `${JSON.stringify(v)} is not a value of ${rule.field}`);
      });
      need(rule.when.field, ['when', 'field']);
      break;
    }
    case 'requiredWhen':
    case 'forbiddenWhen':
      need(rule.field, ['field']);
      need(rule.when.field, ['when', 'field']);
      break;
    case 'sumEquals': {
      need(rule.field, ['field']);
      need(rule.equalsField, ['equalsField']);
      const items = fields.get(rule.field)?.schema.items as JsonSchema | undefined;
      const props = items?.properties as Record<string, unknown> | undefined;
      if (fields.has(rule.field) && !props?.[rule.property])
        report(['property'], `${rule.field} items have no property "${rule.property}"`);
      break;
    }
  }
}

/** "5.4" -> 540: rates are exact decimals turned into integer hundredths of a credit. */
export function rateToHundredths(rate: string): number {
  const [whole, fraction = ''] = rate.split('.');
  return Number(whole) * 100 + Number(fraction.padEnd(2, '0'));
}

function expandPricing(
  raw: RawModel,
  fields: Map<string, ModelField>,
  options: PricingOption[],
  at: (path: (string | number)[], message: string) => void,
): Pick<Model['pricing'], 'options' | 'rates' | 'fixedOptions'> | undefined {
  const rows = raw.pricing?.rates ?? [];
  const fixed = raw.pricing?.fixedOptions ?? {};
  const optionByName = new Map(options.map((o) => [o.name, o]));
  const used: PricingOption[] = [];
  const domains = new Map<string, Scalar[]>();
  let ok = true;
  /** The values an option takes: a fixed option needs no field (with_video false where no clip can be sent). */
  const domainOf = (key: string, path: (string | number)[]): Scalar[] | undefined => {
    const option = optionByName.get(key)!;
    const source = option.from ?? option.nonEmpty!;
    if (!fields.has(source)) {
      // A fixed option whose field the model lacks: its values are those of a switch (all fixable options are).
      if (key in fixed) return typeof fixed[key] === 'boolean' ? [true, false] : [fixed[key]];
      at(path, `rate option "${key}" needs the field "${source}", which this model does not accept`);
      return undefined;
    }
    const domain = option.nonEmpty ? [true, false] : valuesOf(fields.get(source));
    if (!domain) at(path, `rate option "${key}" needs "${source}" to have a fixed set of values`);
    return domain;
  };
  for (const [key, value] of Object.entries(fixed)) {
    const domain = domainOf(key, ['pricing', 'fixedOptions', key]);
    if (domain && !domain.includes(value)) {
      at(['pricing', 'fixedOptions', key], `${JSON.stringify(value)} is not a value of ${key} (${domain.join(', ')})`);
      ok = false;
    }
  }
  for (const [i, row] of rows.entries()) {
    for (const [key, value] of Object.entries(row)) {
      if (key === 'rate') continue;
      const domain = domainOf(key, ['pricing', 'rates', i, key]);
      if (!domain) {
        ok = false;
        continue;
      }
      if (!domain.includes(value as Scalar)) {
        at(['pricing', 'rates', i, key], `${JSON.stringify(value)} is not a value of ${key} (${domain.join(', ')})`);
        ok = false;
      }
      if (!domains.has(key)) {
        domains.set(key, domain);
        used.push(optionByName.get(key)!);
      }
    }
  }
  if (!ok) return undefined;
  used.sort((a, b) => options.indexOf(a) - options.indexOf(b));
  const all = rows.map((row) => {
    const when: Record<string, Scalar> = {};
    for (const option of used)
      if (option.name in row) when[option.name] = row[option.name as keyof typeof row] as Scalar;
    return { when, rate: row.rate, rateHundredths: rateToHundredths(row.rate) };
  });
  const winnerOf = (combination: Record<string, Scalar>) =>
    all.findIndex((r) => Object.entries(r.when).every(([k, v]) => combination[k] === v));
  // Every combination of option values must find a row, and every row must win for some combination.
  const combos = combinations(used.map((o) => [o.name, domains.get(o.name)!] as const));
  const winners = new Set<number>();
  for (const combination of combos) {
    const index = winnerOf(combination);
    if (index < 0) {
      at(
        ['pricing', 'rates'],
        `no rate row matches ${Object.entries(combination)
          .map(([k, v]) => `${k}=${v}`)
          .join(', ')}`,
      );
      ok = false;
    } else winners.add(index);
  }
  all.forEach((_, i) => {
    if (!winners.has(i)) {
      at(['pricing', 'rates', i], 'this rate row never applies: earlier rows match every case it covers');
      ok = false;
    }
  });
  if (!ok) return undefined;
  // Fixed options: the rows that win at the fixed values, in order, without the fixed options.
  const atFixed = new Set(
    combos.filter((c) => Object.entries(fixed).every(([k, v]) => !(k in c) || c[k] === v)).map(winnerOf),
  );
  const free = used.filter((o) => !(o.name in fixed));
  const rates = all
    .filter((_, i) => atFixed.has(i))
    .map((r) => ({ ...r, when: Object.fromEntries(Object.entries(r.when).filter(([k]) => !(k in fixed))) }));
  return { options: free, rates, fixedOptions: { ...fixed } };
}

function combinations(domains: (readonly [string, Scalar[]])[]): Record<string, Scalar>[] {
  let out: Record<string, Scalar>[] = [{}];
  for (const [name, values] of domains) out = out.flatMap((c) => values.map((v) => ({ ...c, [name]: v })));
  return out;
}
