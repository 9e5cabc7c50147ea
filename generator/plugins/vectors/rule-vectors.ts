import type { Rule } from '../../load/types.js';
import type { Cases } from './cases.js';
import { describeCondition, effective, itemsSumming, sampleField, setCondition } from './rules.js';
import { alternatives, choices, fieldOf, numericRange, sampleOf, show, type Input } from './sample.js';

type RuleOf<K extends Rule['kind']> = Extract<Rule, { kind: K }>;

/** Each cross-field rule both ways: a vector where it holds and one where it is broken. */
export function ruleVectors(cases: Cases): void {
  for (const rule of cases.model.rules) {
    switch (rule.kind) {
      case 'atLeastOne':
        atLeastOneVectors(cases, rule);
        break;
      case 'maxTotalItems':
        maxTotalItemsVectors(cases, rule);
        break;
      case 'requiredWhen':
        requiredWhenVectors(cases, rule);
        break;
      case 'forbiddenWhen':
        forbiddenWhenVectors(cases, rule);
        break;
      case 'valueWhen':
        valueWhenVectors(cases, rule);
        break;
      case 'sumEquals':
        sumEqualsVectors(cases, rule);
        break;
    }
  }
}

/** Each listed field alone accepted; none of them (left out, or all empty lists) rejected. */
function atLeastOneVectors(cases: Cases, rule: RuleOf<'atLeastOne'>): void {
  const { model } = cases;
  const required = rule.fields.filter((f) => fieldOf(model, f)!.required);
  const none = rule.fields.reduce((input, f) => cases.with([f], undefined, input), cases.base);
  if (required.length === 0)
    cases.violate(`rule ${rule.id}: violated (none of ${rule.fields.join(', ')} given)`, none, rule.fields, rule);
  for (const field of rule.fields) {
    if (required.some((r) => r !== field)) continue;
    const alone = cases.with([field], sampleField(model, none, field), none);
    cases.accept(`rule ${rule.id}: only ${field} given accepted`, alone, rule.fields);
  }
  const emptiable = rule.fields.every((f) => {
    const schema = fieldOf(model, f)!.schema;
    return schema.type === 'array' && !((schema.minItems as number | undefined) ?? 0);
  });
  if (emptiable) {
    const empty = rule.fields.reduce((input, f) => cases.with([f], [], input), cases.base);
    cases.violate(`rule ${rule.id}: violated (${rule.fields.join(', ')} all empty)`, empty, rule.fields, rule);
  }
}

/** How many items each listed field gets for `total` in all, within each field's limits; undefined when impossible. */
function allocate(cases: Cases, fields: string[], total: number): Map<string, number> | undefined {
  const counts = new Map<string, number>();
  let left = total;
  for (const name of fields) {
    const field = fieldOf(cases.model, name)!;
    const least = field.required ? ((field.schema.minItems as number | undefined) ?? 0) : 0;
    counts.set(name, least);
    left -= least;
  }
  for (const name of fields) {
    const most = (fieldOf(cases.model, name)!.schema.maxItems as number | undefined) ?? Infinity;
    const more = Math.min(left, most - counts.get(name)!);
    counts.set(name, counts.get(name)! + more);
    left -= more;
  }
  if (left !== 0) return undefined;
  const tooFew = fields.some((name) => {
    const n = counts.get(name)!;
    return n > 0 && n < ((fieldOf(cases.model, name)!.schema.minItems as number | undefined) ?? 0);
  });
  return tooFew ? undefined : counts;
}

/** Exactly max items over the listed fields accepted, max+1 rejected: each only when the per-field limits allow it. */
function maxTotalItemsVectors(cases: Cases, rule: RuleOf<'maxTotalItems'>): void {
  const spread = (total: number) => {
    const counts = allocate(cases, rule.fields, total);
    if (!counts) return undefined;
    let input = cases.base;
    for (const [name, n] of counts)
      input = cases.with([name], n > 0 ? sampleOf(fieldOf(cases.model, name)!, n) : undefined, input);
    const what = [...counts]
      .filter(([, n]) => n > 0)
      .map(([name, n]) => `${n} ${name}`)
      .join(' + ');
    return { input, what };
  };
  const atMax = spread(rule.max);
  if (atMax) cases.accept(`rule ${rule.id}: ${atMax.what} (${rule.max} in total) accepted`, atMax.input, rule.fields);
  const over = spread(rule.max + 1);
  if (over)
    cases.violate(`rule ${rule.id}: violated (${over.what} = ${rule.max + 1} in total)`, over.input, rule.fields, rule);
}

/** Condition true: with the field accepted, without it rejected. */
function requiredWhenVectors(cases: Cases, rule: RuleOf<'requiredWhen'>): void {
  const when = setCondition(cases.model, cases.base, rule.when);
  const pins = [rule.when.field, rule.field];
  const condition = describeCondition(rule.when);
  const withField = cases.with([rule.field], sampleField(cases.model, when, rule.field), when);
  cases.accept(`rule ${rule.id}: ${condition} with ${rule.field} accepted`, withField, pins);
  const without = cases.with([rule.field], undefined, when);
  if (fieldOf(cases.model, rule.field)!.required) {
    // The field is required anyway: the schema rejects the request first, and its `required` is the complete reason.
    cases.reject(
      `rule ${rule.id}: ${condition} without ${rule.field} rejected as required`,
      without,
      pins,
      `input.${rule.field}`,
      'required',
    );
    return;
  }
  cases.violate(`rule ${rule.id}: violated (${condition} without ${rule.field})`, without, pins, rule);
}

/** Condition true: without the field accepted, with it rejected. */
function forbiddenWhenVectors(cases: Cases, rule: RuleOf<'forbiddenWhen'>): void {
  const when = setCondition(cases.model, cases.base, rule.when);
  const pins = [rule.when.field, rule.field];
  const condition = describeCondition(rule.when);
  if (!fieldOf(cases.model, rule.field)!.required) {
    cases.accept(
      `rule ${rule.id}: ${condition} without ${rule.field} accepted`,
      cases.with([rule.field], undefined, when),
      pins,
    );
  }
  const withField = cases.with([rule.field], sampleField(cases.model, when, rule.field), when);
  cases.violate(`rule ${rule.id}: violated (${condition} with ${rule.field})`, withField, pins, rule);
}

/** Condition true: each allowed value accepted, a value outside them rejected. */
function valueWhenVectors(cases: Cases, rule: RuleOf<'valueWhen'>): void {
  const when = setCondition(cases.model, cases.base, rule.when);
  const pins = [rule.when.field, rule.field];
  const condition = describeCondition(rule.when);
  for (const value of rule.values) {
    cases.accept(
      `rule ${rule.id}: ${condition} with ${rule.field}=${show(value)} accepted`,
      cases.with([rule.field], value, when),
      pins,
    );
  }
  const outside = choices(fieldOf(cases.model, rule.field)!.schema)?.find((v) => !rule.values.includes(v));
  if (outside === undefined) return;
  const name = `rule ${rule.id}: violated (${condition} with ${rule.field}=${show(outside)})`;
  cases.violate(name, cases.with([rule.field], outside, when), pins, rule);
}

/**
 * Entries whose property adds up to the target field accepted, off by one rejected; under the
 * conditions that require the list (so the rules that forbid it elsewhere hold).
 */
function sumEqualsVectors(cases: Cases, rule: RuleOf<'sumEquals'>): void {
  const { model } = cases;
  let input: Input = cases.base;
  for (const other of model.rules) {
    if (other.kind === 'requiredWhen' && other.field === rule.field) input = setCondition(model, input, other.when);
  }
  const target = sumTarget(cases, rule, input);
  if (target === undefined) return;
  input = cases.with([rule.equalsField], target, input);
  const items = itemsSumming(model, rule, target, 2) ?? itemsSumming(model, rule, target, 1)!;
  const parts = items.map((item) => (item as Input)[rule.property] as number);
  const pins = [rule.field, rule.equalsField];
  const adds = `${rule.field} ${rule.property} ${parts.join('+')}`;
  cases.accept(
    `rule ${rule.id}: ${adds} = ${rule.equalsField} ${target} accepted`,
    cases.with([rule.field], items, input),
    pins,
  );
  const off = items.map((item, i) =>
    i === items.length - 1 ? { ...(item as Input), [rule.property]: parts[i] + 1 } : item,
  );
  const name = `rule ${rule.id}: violated (${rule.field} ${rule.property} adds up to ${target + 1}, ${rule.equalsField} is ${target})`;
  cases.violate(name, cases.with([rule.field], off, input), pins, rule);
}

/** The target value to add up to: the field's value at the base, else its first valid value a list can reach. */
function sumTarget(cases: Cases, rule: RuleOf<'sumEquals'>, input: Input): number | undefined {
  const schema = fieldOf(cases.model, rule.equalsField)!.schema;
  const auto = numericRange(schema)?.auto;
  const current = effective(cases.model, input, rule.equalsField);
  const candidates = [current, ...alternatives(schema)].filter((v): v is number => typeof v === 'number' && v !== auto);
  return candidates.find((v) => itemsSumming(cases.model, rule, v, 1) !== undefined);
}
