import { isObject } from './field-schema.js';
import type { YamlSource } from './read-yaml.js';
import type { RawModel, Rule } from './types.js';

/** Keys a file never inherits from the one it extends. */
const OWN_KEYS = new Set(['id', 'extends', 'abstract']);

type RuleMap = Record<string, Omit<Rule, 'id'> & { id?: string }>;

/** Rules as a map keyed by id (a list is turned into one, in order). */
function ruleMap(rules: unknown): RuleMap {
  if (Array.isArray(rules)) return Object.fromEntries((rules as Rule[]).map((r) => [r.id, r]));
  return isObject(rules) ? (rules as RuleMap) : {};
}

/**
 * Maps merge deeply, arrays and scalars replace, null removes the inherited entry. `rules` is the
 * one exception: written as a map keyed by rule id, it merges with the inherited rules rule by
 * rule (an id replaces the whole rule, null removes it); written as a list it replaces them all.
 */
export function mergeModel(
  base: Record<string, unknown>,
  over: Record<string, unknown>,
  top = true,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(base)) if (!top || !OWN_KEYS.has(key)) out[key] = value;
  for (const [key, value] of Object.entries(over)) {
    if (value === null) delete out[key];
    else if (top && key === 'rules' && isObject(value)) {
      const rules = { ...ruleMap(out.rules) };
      for (const [id, rule] of Object.entries(value)) {
        if (rule === null) delete rules[id];
        else rules[id] = rule as RuleMap[string];
      }
      out.rules = rules;
    } else if (isObject(value) && isObject(out[key]))
      out[key] = mergeModel(out[key] as Record<string, unknown>, value, false);
    else out[key] = value;
  }
  return out;
}

/** The merged rules as the list the plugins read: each with its id (a map entry's key). */
export function ruleList(rules: unknown): Rule[] {
  return Object.entries(ruleMap(rules)).map(([id, rule]) => ({ ...rule, id }) as Rule);
}

/** Where a rule was written: ['rules', index] in a list, ['rules', id] in a map, in the first file of the chain that has it. */
export function rulePath(chain: YamlSource[], id: string): (string | number)[] {
  for (const source of chain) {
    const rules = (source.data as RawModel).rules as unknown;
    if (Array.isArray(rules)) {
      const index = (rules as Rule[]).findIndex((r) => r.id === id);
      if (index >= 0) return ['rules', index];
    } else if (isObject(rules) && rules[id] !== undefined) return ['rules', id];
  }
  return ['rules'];
}
