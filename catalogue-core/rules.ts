/*
 * A model's cross-field rules (spec `rules:`) as data, and the one function that checks them on an
 * input that passed its schema.
 */
import type { FieldIssue, MessageRef } from './issues.js';
import { countItems, given } from './json-values.js';

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
