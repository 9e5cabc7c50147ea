import type { Condition, Model, Rule } from '../../load/types.js';
import {
  alternatives,
  fieldOf,
  given,
  inRange,
  numericRange,
  sample,
  sampleOf,
  setAt,
  show,
  type Input,
} from './sample.js';

type SumRule = Extract<Rule, { kind: 'sumEquals' }>;

/** A field's value as the rules see it: what the input gives, else the field's default. */
export function effective(model: Model, input: Input, name: string): unknown {
  return input[name] !== undefined ? input[name] : fieldOf(model, name)?.schema.default;
}

export function holds(model: Model, input: Input, condition: Condition): boolean {
  const value = effective(model, input, condition.field);
  return 'present' in condition ? given(value) : value === condition.equals;
}

/** field=value, or "field given". */
export const describeCondition = (c: Condition) =>
  'present' in c ? `${c.field} given` : `${c.field}=${show(c.equals)}`;

/** Where the validator reports a broken rule. */
export const rulePath = (rule: Rule) => ('field' in rule ? `input.${rule.field}` : 'input');

const count = (value: unknown) => (Array.isArray(value) ? value.length : 0);
const sumOf = (items: unknown[], property: string) =>
  items.reduce<number>((s, item) => s + ((item as Input)[property] as number), 0);

/** Whether the input breaks the rule, judged as the generated validator judges it (defaults applied). */
export function breaks(model: Model, rule: Rule, input: Input): boolean {
  const value = (name: string) => effective(model, input, name);
  switch (rule.kind) {
    case 'atLeastOne':
      return !rule.fields.some((f) => given(value(f)));
    case 'maxTotalItems':
      return rule.fields.reduce((s, f) => s + count(value(f)), 0) > rule.max;
    case 'requiredWhen':
      return holds(model, input, rule.when) && !given(value(rule.field));
    case 'forbiddenWhen':
      return holds(model, input, rule.when) && given(value(rule.field));
    case 'valueWhen':
      return (
        holds(model, input, rule.when) &&
        value(rule.field) !== undefined &&
        !rule.values.includes(value(rule.field) as never)
      );
    case 'sumEquals': {
      const items = value(rule.field);
      const target = value(rule.equalsField);
      return (
        Array.isArray(items) && items.length > 0 && typeof target === 'number' && sumOf(items, rule.property) !== target
      );
    }
  }
}

export const violations = (model: Model, input: Input) => model.rules.filter((rule) => breaks(model, rule, input));

/** Whether a vector keeps the field fixed: the whole field, or (with `whole` false) any part of it. */
export function isPinned(pinned: Set<string>, field: string, whole = false): boolean {
  return pinned.has(field) || (!whole && pinned.has(`${field}[0]`));
}

/** `parts` items of a sumEquals field whose property adds up to target, or undefined when it cannot. */
export function itemsSumming(model: Model, rule: SumRule, target: number, parts: number): unknown[] | undefined {
  const field = fieldOf(model, rule.field)!;
  const itemSchema = field.schema.items as Record<string, unknown>;
  const property = (itemSchema.properties as Record<string, Record<string, unknown>>)[rule.property];
  const least = Math.max((property.minimum as number | undefined) ?? 1, 1);
  if (!Number.isInteger(target) || target < least * parts) return undefined;
  const share = Math.floor(target / parts);
  return Array.from({ length: parts }, (_, i) => ({
    ...(sample(itemSchema, { field: field.name, n: i + 1 }) as Input),
    [rule.property]: i === parts - 1 ? target - share * (parts - 1) : share,
  }));
}

/** A valid value for a field, fitted to the sumEquals rule it is the list of (multi_prompt adds up to duration). */
export function sampleField(model: Model, input: Input, name: string): unknown {
  const sum = model.rules.find((r): r is SumRule => r.kind === 'sumEquals' && r.field === name);
  const target = sum && effective(model, input, sum.equalsField);
  if (sum && typeof target === 'number') return itemsSumming(model, sum, target, 1) ?? sampleOf(fieldOf(model, name)!);
  return sampleOf(fieldOf(model, name)!);
}

/** Sets a condition true: the value it compares with, or a sample for `present`. */
export function setCondition(model: Model, input: Input, condition: Condition): Input {
  const value = 'present' in condition ? sampleField(model, input, condition.field) : condition.equals;
  return setAt(model, input, [condition.field], value);
}

/** Inputs that make the condition false, changing only its field (to another valid value, or removing it). */
function conditionOff(model: Model, input: Input, condition: Condition, pinned: Set<string>): Input[] {
  const field = fieldOf(model, condition.field)!;
  if (isPinned(pinned, field.name)) return [];
  if ('present' in condition) return field.required ? [] : [setAt(model, input, [field.name], undefined)];
  return alternatives(field.schema)
    .filter((v) => v !== condition.equals)
    .map((v) => setAt(model, input, [field.name], v));
}

/** Candidate repairs of one broken rule that leave the pinned fields as they are. */
function repairs(model: Model, rule: Rule, input: Input, pinned: Set<string>): Input[] {
  const free = (name: string) => !isPinned(pinned, name);
  const set = (name: string, value: unknown) => setAt(model, input, [name], value);
  switch (rule.kind) {
    case 'atLeastOne':
      return rule.fields.filter(free).map((f) => set(f, sampleField(model, input, f)));
    case 'maxTotalItems': {
      // Shrink every free field: to its smallest valid list when required, away otherwise.
      let out = input;
      for (const f of rule.fields.filter(free)) {
        out = setAt(model, out, [f], fieldOf(model, f)!.required ? sampleField(model, out, f) : undefined);
      }
      return [out];
    }
    case 'requiredWhen':
      return [
        ...(free(rule.field) ? [set(rule.field, sampleField(model, input, rule.field))] : []),
        ...conditionOff(model, input, rule.when, pinned),
      ];
    case 'forbiddenWhen':
      return [
        ...(free(rule.field) && !fieldOf(model, rule.field)!.required ? [set(rule.field, undefined)] : []),
        ...conditionOff(model, input, rule.when, pinned),
      ];
    case 'valueWhen':
      return [
        ...(free(rule.field) ? rule.values.map((v) => set(rule.field, v)) : []),
        ...conditionOff(model, input, rule.when, pinned),
      ];
    case 'sumEquals':
      return rebalance(model, rule, input, pinned);
  }
}

/** Makes a list add up: refill the free part of the list, or move the target to the sum. */
function rebalance(model: Model, rule: SumRule, input: Input, pinned: Set<string>): Input[] {
  const out: Input[] = [];
  const items = effective(model, input, rule.field) as unknown[];
  const target = effective(model, input, rule.equalsField) as number;
  if (!isPinned(pinned, rule.field, true)) {
    const kept = isPinned(pinned, rule.field) ? items.slice(0, 1) : [];
    const rest = target - sumOf(kept, rule.property);
    const filler = rest === 0 && kept.length > 0 ? [] : itemsSumming(model, rule, rest, 1);
    if (filler) out.push(setAt(model, input, [rule.field], [...kept, ...filler]));
  }
  const range = numericRange(fieldOf(model, rule.equalsField)!.schema);
  const sum = sumOf(items, rule.property);
  if (!isPinned(pinned, rule.equalsField) && range && inRange(range, sum))
    out.push(setAt(model, input, [rule.equalsField], sum));
  return out;
}

/**
 * The input with every rule but `except` holding, changing only fields that are not pinned:
 * a small depth-first search over the repairs of the first broken rule. Undefined when none works.
 */
export function satisfy(model: Model, input: Input, pinned: Set<string>, except?: string): Input | undefined {
  const seen = new Set<string>();
  const search = (current: Input, depth: number): Input | undefined => {
    const key = JSON.stringify(current);
    if (seen.has(key) || depth > 8) return undefined;
    seen.add(key);
    const broken = violations(model, current).find((r) => r.id !== except);
    if (!broken) return current;
    for (const next of repairs(model, broken, current, pinned)) {
      const found = search(next, depth + 1);
      if (found) return found;
    }
    return undefined;
  };
  return search(input, 0);
}
