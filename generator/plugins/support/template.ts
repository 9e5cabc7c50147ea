/*
 * Shared code of every generated module: result types, the mapping of ajv errors to field
 * problems, integer money, billable seconds and prompt-marker matching. Copied verbatim from
 * generator/plugins/support/template.ts so that generated/ depends on nothing hand-written.
 */

/** A message reference: a key of spec/errors.yaml and the values of its placeholders. */
export interface MessageRef {
  key: string;
  params: Record<string, string | number | MessageRef>;
}

/** One problem with one field: its path (input.duration_seconds), the rule it breaks, its message. */
export interface FieldIssue {
  path: string;
  rule: string;
  message: MessageRef;
}

export type ValidationResult = { ok: true; value: Record<string, unknown> } | { ok: false; errors: FieldIssue[] };

export interface Warning {
  code: string;
  path: string;
  message: MessageRef;
}

/** One error of ajv's compiled schema function (the fields read here). */
export interface AjvError {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  params: Record<string, unknown>;
}

export interface AutoRange {
  auto: number;
  min?: number;
  max?: number;
}

const KEYWORD_MESSAGES: Record<string, string> = {
  required: 'required',
  additionalProperties: 'unknown_field',
  type: 'type',
  enum: 'enum',
  const: 'enum',
  minimum: 'minimum',
  maximum: 'maximum',
  minLength: 'min_length',
  maxLength: 'max_length',
  minItems: 'min_items',
  maxItems: 'max_items',
  pattern: 'pattern',
};

/** input.loras[0].scale from /loras/0/scale. */
export function fieldPath(instancePath: string, child?: string): string {
  const parts = instancePath.split('/').slice(1);
  if (child !== undefined) parts.push(child);
  let out = 'input';
  for (const part of parts)
    out += /^\d+$/.test(part) ? `[${part}]` : `.${part.replace(/~1/g, '/').replace(/~0/g, '~')}`;
  return out;
}

/** Turns ajv's errors into one FieldIssue per problem, with the rule and message key spelt out. */
export function mapAjvErrors(
  errors: readonly AjvError[],
  patternMessages: Record<string, string>,
  autoRanges: Record<string, AutoRange>,
): FieldIssue[] {
  const out: FieldIssue[] = [];
  const collapsed = new Set<string>();
  for (const e of errors) {
    if (e.keyword === 'anyOf' && autoRanges[e.schemaPath]) collapsed.add(e.schemaPath);
  }
  const seen = new Set<string>();
  for (const e of errors) {
    if ([...collapsed].some((p) => e.schemaPath.startsWith(`${p}/`))) continue;
    let path = fieldPath(e.instancePath);
    let rule = e.keyword;
    let key = KEYWORD_MESSAGES[e.keyword] ?? 'pattern';
    const params: Record<string, string | number | MessageRef> = {};
    switch (e.keyword) {
      case 'required':
        path = fieldPath(e.instancePath, String(e.params.missingProperty));
        break;
      case 'additionalProperties':
        path = fieldPath(e.instancePath, String(e.params.additionalProperty));
        rule = 'unknown_field';
        break;
      case 'type':
        params.type = String(e.params.type);
        break;
      case 'enum':
        params.values = (e.params.allowedValues as unknown[]).map(String).join(', ');
        break;
      case 'const':
        rule = 'enum';
        params.values = String(e.params.allowedValue);
        break;
      case 'minimum':
      case 'maximum':
      case 'minLength':
      case 'maxLength':
      case 'minItems':
      case 'maxItems':
        params.limit = Number(e.params.limit);
        break;
      case 'pattern':
        key = patternMessages[e.schemaPath] ?? 'pattern';
        break;
      case 'anyOf': {
        const range = autoRanges[e.schemaPath];
        if (range) {
          rule = 'range_or_auto';
          key = 'range_or_auto';
          params.auto = range.auto;
          params.min = range.min ?? '';
          params.max = range.max ?? '';
        }
        break;
      }
    }
    params.field = path;
    const id = `${path}|${rule}`;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push({ path, rule, message: { key, params } });
  }
  return out;
}

/** How deep a request's JSON may nest (a model input needs a handful of levels). */
export const MAX_JSON_DEPTH = 32;

/**
 * A copy of parsed JSON data, so that filling in defaults never touches the caller's object.
 * Iterative (an explicit stack, not recursion): a body nested thousands of levels deep cannot
 * overflow the call stack here.
 */
export function cloneJson<T>(value: T): T {
  const root = emptyCopy(value);
  if (root === value) return value;
  // Two parallel stacks (originals, copies) rather than one of pairs: no array per node, and the
  // copy is about 2.8 times faster (bench/README.md, issue 19).
  const originals: unknown[] = [value];
  const copies: unknown[] = [root];
  while (originals.length > 0) {
    const from = originals.pop();
    const to = copies.pop();
    if (Array.isArray(from)) {
      for (let i = 0; i < from.length; i++) {
        const original: unknown = from[i];
        const item = emptyCopy(original);
        (to as unknown[])[i] = item;
        if (item !== original) {
          originals.push(original);
          copies.push(item);
        }
      }
      continue;
    }
    for (const key in from as object) {
      if (!Object.hasOwn(from as object, key)) continue;
      const original = (from as Record<string, unknown>)[key];
      const item = emptyCopy(original);
      // An own "__proto__" key stays a plain key (then rejected as unknown), never a prototype.
      if (key === '__proto__')
        Object.defineProperty(to, key, { value: item, enumerable: true, writable: true, configurable: true });
      else (to as Record<string, unknown>)[key] = item;
      if (item !== original) {
        originals.push(original);
        copies.push(item);
      }
    }
  }
  return root as T;
}

/** An empty array or object to copy `item` into, or `item` itself when it is a primitive. */
function emptyCopy(item: unknown): unknown {
  return Array.isArray(item) ? new Array(item.length) : typeof item === 'object' && item !== null ? {} : item;
}

/**
 * The path (`input.a[0].b`, from `prefix`) of the first value nested deeper than `limit`
 * levels, or undefined. Iterative, and it stops at the first one: linear in the data's size.
 */
export function tooDeepPath(value: unknown, limit = MAX_JSON_DEPTH, prefix = 'input'): string | undefined {
  const stack: [unknown, string, number][] = [[value, prefix, 0]];
  while (stack.length > 0) {
    const [item, path, depth] = stack.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    if (depth >= limit) return path;
    if (Array.isArray(item))
      for (let i = item.length - 1; i >= 0; i--) stack.push([item[i], `${path}[${i}]`, depth + 1]);
    else
      for (const key of Object.keys(item).reverse())
        stack.push([(item as Record<string, unknown>)[key], path ? `${path}.${key}` : key, depth + 1]);
  }
  return undefined;
}

/** A field counts as given when it is present and, for arrays, not empty. */
export function given(value: unknown): boolean {
  return value !== undefined && value !== null && !(Array.isArray(value) && value.length === 0);
}

export function countItems(value: unknown): number {
  return Array.isArray(value) ? value.length : 0;
}

// ---- cross-field rules ----------------------------------------------------------------

type RuleScalar = string | number | boolean;

/** A rule's condition: a field equals a value, or is given. */
export type RuleCondition = { field: string; equals: RuleScalar } | { field: string; present: true };

/** A cross-field rule of a model (spec `rules:`), checked on an input that passed the schema. */
export type CrossFieldRule =
  | { kind: 'atLeastOne'; id: string; fields: readonly string[] }
  | { kind: 'maxTotalItems'; id: string; fields: readonly string[]; max: number }
  | { kind: 'requiredWhen'; id: string; field: string; when: RuleCondition }
  | { kind: 'forbiddenWhen'; id: string; field: string; when: RuleCondition }
  | { kind: 'valueWhen'; id: string; field: string; values: readonly RuleScalar[]; when: RuleCondition }
  | { kind: 'sumEquals'; id: string; field: string; property: string; equalsField: string };

function conditionHolds(v: Record<string, unknown>, c: RuleCondition): boolean {
  return 'present' in c ? given(v[c.field]) : v[c.field] === c.equals;
}

function conditionMessage(c: RuleCondition): MessageRef {
  const field = `input.${c.field}`;
  return 'present' in c
    ? { key: 'condition_present', params: { field } }
    : { key: 'condition_equals', params: { field, value: String(c.equals) } };
}

const fieldList = (fields: readonly string[]) => fields.map((f) => `input.${f}`).join(', ');

/** The problem one rule finds in a normalized input, or undefined. */
function ruleIssue(v: Record<string, unknown>, rule: CrossFieldRule): FieldIssue | undefined {
  switch (rule.kind) {
    case 'atLeastOne':
      for (const f of rule.fields) if (given(v[f])) return undefined;
      return ruleProblem(rule, 'input', 'rule_at_least_one', { fields: fieldList(rule.fields) });
    case 'maxTotalItems': {
      let total = 0;
      for (const f of rule.fields) total += countItems(v[f]);
      return total > rule.max
        ? ruleProblem(rule, 'input', 'rule_max_total_items', { max: rule.max, fields: fieldList(rule.fields) })
        : undefined;
    }
    case 'requiredWhen':
      return conditionHolds(v, rule.when) && !given(v[rule.field])
        ? ruleProblem(rule, `input.${rule.field}`, 'rule_required_when', { condition: conditionMessage(rule.when) })
        : undefined;
    case 'forbiddenWhen':
      return conditionHolds(v, rule.when) && given(v[rule.field])
        ? ruleProblem(rule, `input.${rule.field}`, 'rule_forbidden_when', { condition: conditionMessage(rule.when) })
        : undefined;
    case 'valueWhen': {
      const value = v[rule.field];
      const refused = conditionHolds(v, rule.when) && value !== undefined && !rule.values.includes(value as RuleScalar);
      return refused
        ? ruleProblem(rule, `input.${rule.field}`, 'rule_value_when', {
            values: rule.values.join(', '),
            condition: conditionMessage(rule.when),
          })
        : undefined;
    }
    case 'sumEquals': {
      const items = v[rule.field];
      const target = v[rule.equalsField];
      if (!Array.isArray(items) || items.length === 0 || typeof target !== 'number') return undefined;
      let sum = 0;
      for (const item of items) sum += (item as Record<string, number>)[rule.property];
      return sum !== target
        ? ruleProblem(rule, `input.${rule.field}`, 'rule_sum_equals', { property: rule.property, target })
        : undefined;
    }
  }
}

/** A rule's problem at `path` (built only when a rule fails: the passing path allocates nothing). */
function ruleProblem(
  rule: CrossFieldRule,
  path: string,
  key: string,
  params: Record<string, string | number | MessageRef>,
): FieldIssue {
  return { path, rule: rule.id, message: { key, params: { field: path, ...params } } };
}

/** Every problem the model's cross-field rules find, in rule order. */
export function checkRules(v: Record<string, unknown>, rules: readonly CrossFieldRule[]): FieldIssue[] {
  const out: FieldIssue[] = [];
  for (const rule of rules) {
    const found = ruleIssue(v, rule);
    if (found) out.push(found);
  }
  return out;
}

// ---- money: integers only -------------------------------------------------------------

/** ceil(a / b) for non-negative safe integers, without floating point. */
export function ceilDiv(a: number, b: number): number {
  const q = (a - (a % b)) / b;
  return a % b === 0 ? q : q + 1;
}

/** Whole credits for a rate in hundredths of a credit per second, over whole seconds, rounded up. */
export function chargeCredits(rateHundredths: number, seconds: number): number {
  return ceilDiv(rateHundredths * seconds, 100);
}

/** 1 credit = 0.01 USD: 1234 credits -> "12.34". */
export function creditsToUsd(credits: number): string {
  const sign = credits < 0 ? '-' : '';
  const abs = Math.abs(credits);
  return `${sign}${(abs - (abs % 100)) / 100}.${String(abs % 100).padStart(2, '0')}`;
}

/** "12.34" -> 1234 credits; undefined when the text is not a USD amount with at most two places. */
export function usdToCredits(text: string): number | undefined {
  const match = /^(0|[1-9]\d{0,12})(?:\.(\d{1,2}))?$/.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
}

// ---- billable seconds and price --------------------------------------------------------

export interface BillingConfig {
  durationField?: string;
  /** The duration value that lets the model choose, held at maxDuration, estimated at defaultDuration. */
  auto?: number;
  maxDuration?: number;
  defaultDuration?: number;
  referenceClips?: {
    field: string;
    maxTotalSeconds: number;
    perClipMinimumSeconds?: number;
    holdAssumesSeconds: number;
  };
  /**
   * A supplied clip the model works on. `joined`: the output is the clip then a new segment of the
   * duration field, and the clip's seconds count only with billSourceSeconds; `clip-length`: the
   * output runs as long as the clip, so the clip's length is the billable duration.
   */
  sourceClip?: { field: string; output: 'joined' | 'clip-length'; billSourceSeconds?: boolean; assumedSeconds: number };
}

/** What is known beyond the request: measured output length (at settlement), reference clip lengths. */
export interface PriceFacts {
  outputSeconds?: number;
  /** One entry per reference clip, in order; null where the length is not known. */
  referenceClipSeconds?: readonly (number | null)[];
  /** Length of the supplied source clip (sourceClip.field), when known: a task's output, or measured. */
  sourceClipSeconds?: number;
}

export interface PriceResult {
  rate: string;
  rateHundredths: number;
  options: Record<string, string | number | boolean>;
  billableSeconds: number;
  maxBillableSeconds: number;
  estimatedCredits: number;
  maxCredits: number;
}

function referenceSeconds(input: Record<string, unknown>, config: BillingConfig, facts: PriceFacts): number {
  const clips = config.referenceClips;
  if (!clips) return 0;
  const count = countItems(input[clips.field]);
  if (count === 0) return 0;
  const lengths = facts.referenceClipSeconds;
  const known = lengths !== undefined && lengths.length === count && lengths.every((l) => typeof l === 'number');
  if (!known) return Math.min(clips.maxTotalSeconds, clips.holdAssumesSeconds);
  let total = 0;
  for (const length of lengths as number[]) total += Math.max(clips.perClipMinimumSeconds ?? 0, Math.ceil(length));
  return Math.min(clips.maxTotalSeconds, total);
}

/** Whole seconds of a length in seconds, rounded up; lengths are measured to the millisecond. */
const wholeSeconds = (seconds: number) => ceilDiv(Math.max(0, Math.round(seconds * 1000)), 1000);

/** The source clip's billable seconds: its known length, or the assumed one. */
function sourceSeconds(config: BillingConfig, facts: PriceFacts): number {
  const known = facts.sourceClipSeconds;
  return known !== undefined ? wholeSeconds(known) : config.sourceClip!.assumedSeconds;
}

export function computePrice(
  input: Record<string, unknown>,
  facts: PriceFacts,
  config: BillingConfig,
  rate: readonly [number, string],
  options: Record<string, string | number | boolean>,
): PriceResult {
  let estimated = 0;
  let max = 0;
  if (config.durationField !== undefined) {
    const requested = input[config.durationField] as number;
    if (config.auto !== undefined && requested === config.auto) {
      estimated = config.defaultDuration ?? config.maxDuration ?? 0;
      max = config.maxDuration ?? estimated;
    } else {
      estimated = requested;
      max = requested;
    }
  }
  const clip = config.sourceClip;
  // The clip's own seconds: the whole output of clip-length, a billed part of joined.
  const clipSeconds =
    clip && (clip.output === 'clip-length' || clip.billSourceSeconds) ? sourceSeconds(config, facts) : 0;
  estimated += clipSeconds;
  max += clipSeconds;
  if (facts.outputSeconds !== undefined) {
    if (clip?.output === 'joined' && !clip.billSourceSeconds) {
      // The joined file holds the clip, which is not billed: the new segment is the rest.
      if (facts.sourceClipSeconds !== undefined)
        estimated = wholeSeconds(facts.outputSeconds - facts.sourceClipSeconds);
    } else estimated = Math.ceil(facts.outputSeconds);
  }
  const references = referenceSeconds(input, config, facts);
  const billableSeconds = estimated + references;
  const maxBillableSeconds = Math.max(max, estimated) + references;
  return {
    rate: rate[1],
    rateHundredths: rate[0],
    options,
    billableSeconds,
    maxBillableSeconds,
    estimatedCredits: chargeCredits(rate[0], billableSeconds),
    maxCredits: chargeCredits(rate[0], maxBillableSeconds),
  };
}

// ---- prompt markers --------------------------------------------------------------------

export interface MarkerPatternCode {
  re: RegExp;
  kind?: string;
  ordinal?: boolean;
  kindWords?: Record<string, string>;
}

const ORDINALS: Record<string, number> = {
  first: 1,
  second: 2,
  third: 3,
  fourth: 4,
  fifth: 5,
  sixth: 6,
  seventh: 7,
  eighth: 8,
  ninth: 9,
  tenth: 10,
};

/**
 * Warnings for markers that name a reference that was not supplied. `counts` holds how many
 * references of each kind the request carries; kind `any` counts them all.
 */
export function checkMarkerPatterns(
  prompt: unknown,
  patterns: readonly MarkerPatternCode[],
  counts: Record<string, number>,
): Warning[] {
  if (typeof prompt !== 'string') return [];
  const out: Warning[] = [];
  const seen = new Set<string>();
  for (const pattern of patterns) {
    pattern.re.lastIndex = 0;
    for (const match of prompt.matchAll(pattern.re)) {
      const marker = match[0];
      if (seen.has(marker)) continue;
      seen.add(marker);
      const number = pattern.ordinal ? ORDINALS[match[1].toLowerCase()] : Number(match[1]);
      const kind = pattern.kind ?? pattern.kindWords?.[match[2].toLowerCase()] ?? 'any';
      const count = counts[kind] ?? 0;
      if (number <= count) continue;
      const label = kind === 'any' ? 'reference' : kind;
      out.push(
        count === 0
          ? {
              code: 'marker_kind_missing',
              path: 'input.prompt',
              message: { key: 'marker_kind_missing', params: { marker, kind: label } },
            }
          : {
              code: 'marker_unmatched',
              path: 'input.prompt',
              message: { key: 'marker_unmatched', params: { marker, count, kind: label } },
            },
      );
    }
  }
  return out;
}
