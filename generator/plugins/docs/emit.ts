import { readFileSync } from 'node:fs';
import Handlebars from 'handlebars';
import type {
  Catalogue,
  Condition,
  JsonSchema,
  MarkerStyle,
  Model,
  ModelField,
  ReferenceLimits,
  Rule,
  Scalar,
} from '../../load/types.js';
import { allModelInputs, type GeneratedFile, type Plugin, type PluginContext } from '../../plugin.js';
import { modelInfo } from '../catalogue/model-info.js';
import { SOURCE_VIDEO_FORMAT } from '../../load/modes.js';
import { notServedText, type ProviderProtocol } from '../../load/providers.js';
import type { ProviderProfile } from '../../load/profile.js';
import { billingConfig } from '../prices/emit.js';
import { outputView } from './output-view.js';
import { chargeCredits, creditsToUsd } from '../../../catalogue-core/money.js';

type Messages = Record<string, Record<string, string>>;

// ---- Handlebars: an isolated instance; Markdown output, so no HTML escaping ---------------------

const hbs = Handlebars.create();
/** Escapes `<` outside code spans, so that text such as <asset_id> is not read as HTML. */
const md = (text: unknown) =>
  String(text)
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 ? part : part.replace(/</g, '\\<')))
    .join('');
hbs.registerHelper('md', md);
hbs.registerHelper('cell', (text: unknown) =>
  md(text)
    .replace(/\|/g, '\\|')
    .replace(/\s*\n\s*/g, ' '),
);
const template = (name: string) =>
  hbs.compile(readFileSync(new URL(`./templates/${name}.hbs`, import.meta.url), 'utf8'), { noEscape: true });
const templates = {
  model: template('model'),
  index: template('index'),
  errors: template('errors'),
  decisions: template('decisions'),
  providers: template('providers'),
};

/** Trims trailing spaces, collapses runs of blank lines, ends with one LF. */
const tidy = (text: string) =>
  `${text
    .replace(/\r\n/g, '\n')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()}\n`;

// ---- small pure helpers ------------------------------------------------------------------

const code = (value: unknown) => `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``;
const list = (items: string[], last = 'and') =>
  items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} ${last} ${items[items.length - 1]}`;

/** An integer scaled by 10^places as an exact decimal without trailing zeros: (555, 4) -> "0.0555". */
export function decimal(value: number, places: number): string {
  const digits = String(value).padStart(places + 1, '0');
  const fraction = digits.slice(-places).replace(/0+$/, '');
  return fraction ? `${digits.slice(0, -places)}.${fraction}` : digits.slice(0, -places);
}

export function rangeText(min?: number, max?: number, unit = ''): string {
  if (min !== undefined && max !== undefined) return min === max ? `${min}${unit}` : `${min}–${max}${unit}`;
  if (min !== undefined) return `at least ${min}${unit}`;
  return max !== undefined ? `up to ${max}${unit}` : '';
}

function itemsText(s: JsonSchema): string {
  const text = rangeText(s.minItems as number | undefined, s.maxItems as number | undefined);
  return text && `${text} item${s.maxItems === 1 || (s.maxItems === undefined && s.minItems === 1) ? '' : 's'}`;
}

const typeText = (s: JsonSchema) => (s.type === 'array' ? `array of ${(s.items as JsonSchema).type}s` : String(s.type));

/** What a value must look like, from its schema; `path` is its ajv schemaPath (for pattern messages). */
function acceptedText(s: JsonSchema, path: string, model: Model, validation: Messages): string {
  if (Array.isArray(s.enum)) return (s.enum as Scalar[]).map(code).join(', ');
  if (Array.isArray(s.anyOf)) {
    const [auto, range] = s.anyOf as JsonSchema[];
    return `${code(auto.const)} (model chooses) or ${rangeText(range.minimum as number, range.maximum as number)}`;
  }
  if (s.type === 'boolean') return '`true`, `false`';
  if (s.type === 'integer' || s.type === 'number')
    return rangeText(s.minimum as number, s.maximum as number) || `any ${s.type}`;
  if (typeof s.pattern === 'string') {
    const key = model.patternMessages[`${path}/pattern`];
    const english = key ? validation[key]?.en : undefined;
    return english ? english.replace(/^\{field\} must be /, '').replace(/\.$/, '') : `matching ${code(s.pattern)}`;
  }
  if (s.type === 'array') {
    const items = s.items as JsonSchema;
    if (items.type !== 'object') return `each ${acceptedText(items, `${path}/items`, model, validation)}`;
    const required = (items.required as string[] | undefined) ?? [];
    const props = Object.entries(items.properties as Record<string, JsonSchema>).map(([name, p]) => {
      const parts = [
        required.includes(name) ? 'required' : 'optional',
        itemsText(p),
        acceptedText(p, `${path}/items/properties/${name}`, model, validation),
      ];
      if (p.default !== undefined) parts.push(`default ${code(p.default)}`);
      return `${code(name)} (${parts.filter(Boolean).join('; ')})`;
    });
    return `objects: ${props.join(', ')}`;
  }
  return 'text';
}

function fieldView(f: ModelField, model: Model, validation: Messages) {
  const s = f.schema;
  const size = s.type === 'array' ? itemsText(s) : s.maxLength !== undefined ? `max ${s.maxLength} characters` : '';
  const accepted = acceptedText(s, `#/properties/${f.name}`, model, validation);
  const shown = {
    default: s.default === undefined ? '—' : code(s.default),
    size: size || '—',
    description: s.description ?? '',
  };
  return { name: f.name, type: typeText(s), required: f.required ? 'yes' : 'no', accepted, ...shown };
}

/** When a limit is enforced; `generation-published` only where the specification says so for the model. */
const CHECKED = {
  acceptance: 'at acceptance (external links: during generation)',
  'generation-published': 'during generation (published)',
};

function fileLimits(limits: ReferenceLimits, kind: string): string[] {
  const out: string[] = [];
  if (limits.formats) out.push(`formats ${limits.formats.map((f) => f.toUpperCase()).join(', ')}`);
  if (limits.opaque) out.push('no transparency');
  if (limits.sidePx) out.push(`each side ${rangeText(limits.sidePx.min, limits.sidePx.max, ' px')}`);
  if (limits.shortSidePx) out.push(`shortest side ${rangeText(limits.shortSidePx.min, limits.shortSidePx.max, ' px')}`);
  if (limits.maxBytes !== undefined)
    out.push(`up to ${decimal(limits.maxBytes, 6)} MB (${limits.maxBytes} bytes) per file`);
  const each = kind === 'video' ? 'each clip' : 'each file';
  if (limits.clipSeconds) out.push(`${each} ${rangeText(limits.clipSeconds.min, limits.clipSeconds.max, ' s')}`);
  if (limits.totalSeconds) out.push(`${rangeText(limits.totalSeconds.min, limits.totalSeconds.max, ' s')} in total`);
  if (limits.minFps !== undefined) out.push(`at least ${limits.minFps} fps`);
  return out;
}

function referenceViews(model: Model) {
  return model.fields
    .filter((f) => f.reference)
    .map((f) => {
      const limits = model.references[f.reference as keyof Model['references']] as ReferenceLimits | undefined;
      const count = f.schema.type === 'array' ? itemsText(f.schema) || 'no published limit' : 'one URL';
      const found = limits ? fileLimits(limits, f.reference!) : [];
      return {
        kind: f.reference,
        field: f.name,
        count,
        limits: found.join('; ') || '—',
        checked: found.length ? CHECKED[limits!.checked] : '—',
      };
    });
}

const conditionText = (c: Condition) => ('present' in c ? `${c.field} is given` : `${c.field} is ${c.equals}`);

export function ruleText(rule: Rule): string {
  switch (rule.kind) {
    case 'atLeastOne':
      return `at least one of ${list(rule.fields, 'or')} must be given`;
    case 'maxTotalItems':
      return `at most ${rule.max} items in all across ${list(rule.fields)}`;
    case 'requiredWhen':
      return `${rule.field} is required when ${conditionText(rule.when)}`;
    case 'forbiddenWhen':
      return `${rule.field} is not accepted when ${conditionText(rule.when)}`;
    case 'valueWhen':
      return `${rule.field} must be ${list(rule.values.map(String), 'or')} when ${conditionText(rule.when)}`;
    case 'sumEquals':
      return `the ${rule.property} values of the ${rule.field} entries must add up to ${rule.equalsField}`;
  }
}

// ---- the example request -------------------------------------------------------------------

const ORDINALS = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth', 'tenth'];

/** The highest reference number the style's example prompt names, per kind (`any` for shared numbering). */
export function markerNeeds(style: MarkerStyle): Record<string, number> {
  const needs: Record<string, number> = {};
  for (const p of style.patterns) {
    for (const m of style.example.matchAll(new RegExp(p.regex, p.ignoreCase ? 'gi' : 'g'))) {
      const n = p.number === 'ordinal' ? ORDINALS.indexOf(m[1].toLowerCase()) + 1 : Number(m[1]);
      const kind = p.kind ?? p.kindWords?.[m[2].toLowerCase()] ?? 'any';
      needs[kind] = Math.max(needs[kind] ?? 0, n);
    }
  }
  return needs;
}

const EXTENSIONS: Record<string, string> = { image: 'png', video: 'mp4', audio: 'mp3', document: 'pdf' };

/** Whether the model takes lists of references, which its prompt names with markers. */
export const hasReferenceLists = (model: Model) => model.fields.some((f) => f.reference && f.schema.type === 'array');
const PLAIN_PROMPT = 'A red fox trots through fresh snow at dawn; the camera follows it.';

/** A minimal valid input: required fields, the marker example as prompt (plain text without reference lists), and the references it names. */
export function exampleInput(model: Model): Record<string, unknown> {
  const counts = new Map<string, number>();
  const need = (f: ModelField | undefined, n: number) => {
    if (!f) return 0;
    const take = Math.min(n, (f.schema.maxItems as number | undefined) ?? n);
    counts.set(f.name, Math.max(counts.get(f.name) ?? 0, take));
    return take;
  };
  const arrayOf = (kind: string) => model.fields.find((f) => f.reference === kind && f.schema.type === 'array');
  for (const [kind, n] of Object.entries(markerNeeds(model.markers))) {
    if (kind !== 'any') need(arrayOf(kind), n);
    else {
      let left = n;
      for (const k of model.markers.order ?? ['image', 'video', 'audio'])
        left -= need(left > 0 ? arrayOf(k) : undefined, left);
    }
  }
  for (const f of model.fields)
    if (f.required && f.reference) need(f, Math.max(1, (f.schema.minItems as number | undefined) ?? 1));
  for (const rule of model.rules) {
    if (rule.kind === 'atLeastOne' && !rule.fields.some((name) => counts.get(name)))
      need(
        model.fields.find((f) => f.name === rule.fields[0]),
        1,
      );
  }
  const input: Record<string, unknown> = {};
  for (const f of model.fields) {
    const url = (i: number) =>
      f.reference === 'link'
        ? 'https://example.com/article'
        : `https://example.com/ref${i}.${EXTENSIONS[f.reference!]}`;
    const n = counts.get(f.name) ?? 0;
    if (f.name === 'prompt') input.prompt = hasReferenceLists(model) ? model.markers.example : PLAIN_PROMPT;
    else if (n > 0)
      input[f.name] = f.schema.type === 'array' ? Array.from({ length: n }, (_, i) => url(i + 1)) : url(1);
    else if (f.format === SOURCE_VIDEO_FORMAT) input[f.name] = 'https://example.com/clip.mp4';
    else if (f.required)
      input[f.name] = f.schema.default ?? (f.schema.enum as Scalar[] | undefined)?.[0] ?? f.schema.minimum ?? false;
  }
  return input;
}

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/** The link from one model's page to another's: both live under docs/models/<vendor>/<family>/. */
export function relativeModelPath(from: string, to: string): string {
  const depth = from.split('/').length - 1;
  return `${'../'.repeat(depth)}${to}.md`;
}

// ---- pages -----------------------------------------------------------------------------------

/** The same figure GET /models returns. */
const minimumFor5s = (model: Model) => modelInfo(model).pricing.minimumFor5sCredits;
const money = (credits: number) => ({ credits, usd: creditsToUsd(credits) });

function modelView(model: Model, catalogue: Catalogue) {
  const validation = catalogue.errors.validation;
  const billing = billingConfig(model);
  const clips = model.pricing.referenceClips;
  const sizes = model.outputSizes?.table;
  const columns = sizes ? [...new Set(Object.values(sizes).flatMap((row) => Object.keys(row)))] : [];
  const optionDecisions = model.pricing.options
    .filter((o) => o.decision)
    .map((o) => `\`${o.name}\` (pricing option): ${o.decision}`);
  return {
    ...{
      id: model.id,
      title: model.title,
      mode: model.mode,
      modeDescription: model.modeDescription,
      summary: model.summary,
      notes: model.notes,
      assumptions: model.assumptions,
    },
    fields: model.fields.map((f) => fieldView(f, model, validation)),
    references: referenceViews(model),
    videoPlusDuration: model.references.videoSecondsPlusDuration && {
      max: model.references.videoSecondsPlusDuration.max,
      checked: CHECKED[model.references.videoSecondsPlusDuration.checked],
    },
    anyGeneration: Object.values(model.references).some((l) => l?.checked === 'generation-published'),
    rules: model.rules.map((r) => ({ id: r.id, sentence: ruleText(r) })),
    marker: hasReferenceLists(model) && model.markers,
    rateOptions: model.pricing.options,
    fixedOptions: Object.entries(model.pricing.fixedOptions).map(([name, value]) => ({ name, value: String(value) })),
    rates: model.pricing.rates.map((r) => {
      const options = model.pricing.options.map((o) => (o.name in r.when ? String(r.when[o.name]) : 'any'));
      return {
        options,
        rate: r.rate,
        usd: decimal(r.rateHundredths, 4),
        five: money(chargeCredits(r.rateHundredths, 5)),
      };
    }),
    minimum: money(minimumFor5s(model)),
    billing: {
      ...billing,
      hasAuto: billing.auto !== undefined,
      clips,
      joined: model.pricing.sourceClip?.output === 'joined',
    },
    output: outputView(model, catalogue.output),
    outputSizes: sizes && {
      standard: model.outputSizes?.name === 'standard',
      columns,
      rows: Object.entries(sizes).map(([ratio, row]) => ({ ratio, sizes: columns.map((c) => row[c] ?? '—') })),
    },
    decisions: [...model.decisions, ...optionDecisions],
    deprecated: model.deprecated && {
      ...model.deprecated,
      replacementPath: relativeModelPath(model.id, model.deprecated.replacement),
    },
    body: shellQuote(JSON.stringify({ model: model.id, input: exampleInput(model) }, null, 2)),
    python: pythonLiteral(exampleInput(model), '    '),
  };
}

/** A JSON value as a Python literal (the Python client's example: True, False, None). */
function pythonLiteral(value: unknown, indent: string): string {
  if (value === null) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'string' || typeof value === 'number') return JSON.stringify(value);
  const inner = `${indent}    `;
  if (Array.isArray(value))
    return value.length ? `[\n${value.map((v) => `${inner}${pythonLiteral(v, inner)},`).join('\n')}\n${indent}]` : '[]';
  const entries = Object.entries(value as Record<string, unknown>);
  return entries.length
    ? `{\n${entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${pythonLiteral(v, inner)},`).join('\n')}\n${indent}}`
    : '{}';
}

function indexView(models: Model[], catalogue: Catalogue) {
  return {
    models: models.map((m) => ({
      id: m.id,
      path: `models/${m.id}.md`,
      mode: m.mode,
      marker: m.markers.name,
      minimum: money(minimumFor5s(m)),
    })),
    decisions: catalogue.pricingOptions.filter((o) => o.decision).map((o) => ({ name: o.name, decision: o.decision })),
  };
}

function errorsView(catalogue: Catalogue) {
  const { errors } = catalogue;
  const english = (section: Messages) => Object.entries(section).map(([key, messages]) => ({ key, en: messages.en }));
  return {
    // The console's own codes (console_*) answer its internal API only: not part of the public errors page.
    codes: [...errors.codes]
      .filter((c) => !c.name.startsWith('console_'))
      .sort((a, b) => a.code - b.code)
      .map((c) => ({ code: c.code, http: c.http, name: c.name, en: c.messages.en })),
    validation: english(errors.validation),
    taskErrors: english(errors.taskErrors),
    warnings: english(errors.warnings),
    languages: errors.languages,
  };
}

/**
 * How the coded protocols find a job after a submit whose outcome is unknown (their adapters in
 * runtime/upstreams/ are code, not YAML): typed by the list of coded protocols, so a new one must say.
 */
const CODED_FINDING: Record<ProviderProtocol, string> = {
  'openai-videos':
    "a list call: `GET /videos` (newest first, paged), a video of the same model and prompt created in the submit's window",
  jobs: 'not needed: the submit carries an idempotency key, so a submit whose outcome is unknown is sent again and meets its own job',
  'fal-queue':
    'none: the queue API has no list of requests and takes no id of ours; the possible job stays counted as possibly abandoned',
  replicate:
    'none yet: Replicate lists predictions (`GET /v1/predictions`) but this adapter does not read it; the possible job stays counted as possibly abandoned',
};

/** What a profile declares for finding a job (its `find`, or a `submit.lookup` that makes the submit idempotent). */
function profileFinding(profile: ProviderProfile): string {
  if (profile.submit.lookup)
    return `not needed: the submit carries the task's id and \`${profile.submit.lookup.method} ${profile.submit.lookup.path}\` looks the job up by it, so the submit is sent again (idempotent)`;
  const find = profile.find;
  if (!find)
    return "none declared (the profile's comments say why); the possible job stays counted as possibly abandoned";
  if ('list' in find) {
    const matched = Object.keys(find.list.match)
      .map((m) => `\`${m}\``)
      .join(', ');
    return `a list call: \`${find.list.method} ${find.list.path}\`, an item created in the submit's window whose ${matched} equal what the submit sent`;
  }
  return `a client-chosen id: the submit writes the task's id into the request, \`${find.byId.method} ${find.byId.path}\` reads the job by it`;
}

/** Per protocol: the models it cannot run and why, and the values it does not take of the models it serves in part. */
function providersView(catalogue: Catalogue) {
  return {
    protocols: catalogue.providers.map((p) => ({
      protocol: p.protocol,
      finding: p.profile
        ? profileFinding(p.profile)
        : ((CODED_FINDING as Record<string, string>)[p.protocol] ?? 'none'),
      summary: p.summary,
      file: p.file,
      notServed: Object.entries(p.notServed)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([model, reason]) => ({ model, why: notServedText(`\`${p.file}\``, reason) })),
      unsupported: Object.entries(p.fields)
        .filter(([, f]) => f.unsupported)
        .map(([name]) => code(name))
        .join(', '),
      partly: Object.entries(p.unmapped)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([model, fields]) => ({
          model,
          values: Object.entries(fields)
            .map(([field, values]) => `${field} ${values.map((v) => code(v)).join(', ')}`)
            .join('; '),
        })),
    })),
  };
}

function emit({ catalogue }: PluginContext): GeneratedFile[] {
  const models = [...catalogue.models].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return [
    ...models.map((m) => ({
      path: `docs/models/${m.id}.md`,
      contents: tidy(templates.model(modelView(m, catalogue))),
      inputs: [...m.sources, 'spec/shared/*.yaml', 'spec/errors.yaml'],
    })),
    {
      path: 'docs/index.md',
      contents: tidy(templates.index(indexView(models, catalogue))),
      inputs: allModelInputs(catalogue),
    },
    { path: 'docs/errors.md', contents: tidy(templates.errors(errorsView(catalogue))), inputs: ['spec/errors.yaml'] },
    {
      path: 'docs/providers.md',
      contents: tidy(templates.providers(providersView(catalogue))),
      inputs: ['spec/providers/*.yaml', ...allModelInputs(catalogue)],
    },
    {
      path: 'docs/decisions.md',
      contents: tidy(templates.decisions({ decisions: catalogue.serviceDecisions })),
      inputs: ['spec/service/decisions.yaml'],
    },
  ];
}

/** generated/docs/: one Markdown page per model, an index with prices, the error catalogue and the service-wide decisions. */
export const docsPlugin: Plugin = { name: 'docs', emit };
