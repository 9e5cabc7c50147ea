import type { Condition, Model, Rule } from '../../load/types.js';

/** JavaScript source for one model's cross-field rules, run on the input after the schema passed. */
export function emitRules(model: Model): string {
  return model.rules.map(emitRule).join('\n');
}

const lit = (value: unknown) => JSON.stringify(value);
const access = (field: string) => `v[${lit(field)}]`;
const path = (field: string) => lit(`input.${field}`);

function condition(c: Condition): { test: string; message: string } {
  if ('present' in c) {
    return { test: `given(${access(c.field)})`, message: `{ key: "condition_present", params: { field: ${path(c.field)} } }` };
  }
  return {
    test: `${access(c.field)} === ${lit(c.equals)}`,
    message: `{ key: "condition_equals", params: { field: ${path(c.field)}, value: ${lit(String(c.equals))} } }`,
  };
}

function push(at: string, rule: Rule, key: string, params: string): string {
  return `errors.push({ path: ${at}, rule: ${lit(rule.id)}, message: { key: ${lit(key)}, params: { field: ${at}, ${params} } } });`;
}

function emitRule(rule: Rule): string {
  switch (rule.kind) {
    case 'atLeastOne':
      return `  if (!(${rule.fields.map((f) => `given(${access(f)})`).join(' || ')})) ${push(
        lit('input'),
        rule,
        'rule_at_least_one',
        `fields: ${lit(rule.fields.map((f) => `input.${f}`).join(', '))}`,
      )}`;
    case 'maxTotalItems':
      return `  if (${rule.fields.map((f) => `countItems(${access(f)})`).join(' + ')} > ${rule.max}) ${push(
        lit('input'),
        rule,
        'rule_max_total_items',
        `max: ${rule.max}, fields: ${lit(rule.fields.map((f) => `input.${f}`).join(', '))}`,
      )}`;
    case 'requiredWhen': {
      const c = condition(rule.when);
      return `  if (${c.test} && !given(${access(rule.field)})) ${push(path(rule.field), rule, 'rule_required_when', `condition: ${c.message}`)}`;
    }
    case 'forbiddenWhen': {
      const c = condition(rule.when);
      return `  if (${c.test} && given(${access(rule.field)})) ${push(path(rule.field), rule, 'rule_forbidden_when', `condition: ${c.message}`)}`;
    }
    case 'valueWhen': {
      const c = condition(rule.when);
      return `  if (${c.test} && ${access(rule.field)} !== undefined && !${lit(rule.values)}.includes(${access(rule.field)})) ${push(
        path(rule.field),
        rule,
        'rule_value_when',
        `values: ${lit(rule.values.join(', '))}, condition: ${c.message}`,
      )}`;
    }
    case 'sumEquals':
      return [
        `  if (Array.isArray(${access(rule.field)}) && ${access(rule.field)}.length > 0 && typeof ${access(rule.equalsField)} === "number") {`,
        `    let sum = 0;`,
        `    for (const item of ${access(rule.field)}) sum += item[${lit(rule.property)}];`,
        `    if (sum !== ${access(rule.equalsField)}) ${push(
          path(rule.field),
          rule,
          'rule_sum_equals',
          `property: ${lit(rule.property)}, target: ${access(rule.equalsField)}`,
        )}`,
        `  }`,
      ].join('\n');
  }
}
