import { describe, expect, it } from 'vitest';
import { catalogue as generated } from '../../generated/catalogue.js';
import type { JsonSchema, Model, Rule } from '../../generator/load/types.js';
import type { Case } from '../../generator/plugins/vectors/emit.js';
import { vectorsPlugin } from '../../generator/plugins/vectors/emit.js';
import { projectCatalogue } from '../support/catalogue.js';

const catalogue = projectCatalogue();
const files = await vectorsPlugin.emit({ catalogue, emitted: new Map() });
const vectorsOf = new Map(
  files.map((file) => {
    const parsed = JSON.parse(file.contents) as { model: string; cases: Case[] };
    return [parsed.model, parsed.cases];
  }),
);

const rejection = (c: Case) => (c.want === 'accept' ? undefined : c.want.reject);

/** A maxTotalItems rule can only be broken when the per-field limits together allow more than its max. */
function reachable(model: Model, rule: Rule): boolean {
  if (rule.kind !== 'maxTotalItems') return true;
  const most = rule.fields.reduce(
    (sum, f) => sum + ((model.fields.find((x) => x.name === f)!.schema.maxItems as number | undefined) ?? Infinity),
    0,
  );
  return most > rule.max;
}

/** [path, schema] of every numeric field, and of numeric properties of array items (input.loras[0].scale). */
function numericPaths(model: Model): [string, JsonSchema][] {
  const out: [string, JsonSchema][] = [];
  for (const field of model.fields) {
    if (field.schema.type === 'integer' || field.schema.type === 'number')
      out.push([`input.${field.name}`, field.schema]);
    const items = field.schema.items as JsonSchema | undefined;
    for (const [name, sub] of Object.entries((items?.properties ?? {}) as Record<string, JsonSchema>)) {
      if (sub.type === 'integer' || sub.type === 'number') out.push([`input.${field.name}[0].${name}`, sub]);
    }
  }
  return out;
}

const rangeOf = (schema: JsonSchema) =>
  ((schema.anyOf as JsonSchema[] | undefined)?.find((s) => !('const' in s)) ?? schema) as {
    minimum?: number;
    maximum?: number;
  };

describe.each(catalogue.models.map((m) => [m.id, m] as const))('%s', (id, model) => {
  const cases = vectorsOf.get(id)!;

  it('has vectors and a generated validator', () => {
    expect(cases.length).toBeGreaterThan(0);
    expect(generated.get(id), `generated/catalogue.ts has no ${id}; run npm run generate`).toBeDefined();
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const result = generated.get(id)!.validate(structuredClone(c.input));
    const want = rejection(c);
    if (!want) {
      expect(result.ok ? [] : result.errors).toEqual([]);
      return;
    }
    expect(result.ok).toBe(false);
    const errors = result.ok ? [] : result.errors.map((e) => ({ path: e.path, rule: e.rule }));
    expect(errors).toContainEqual(want);
  });

  it('covers every rule both ways', () => {
    for (const rule of model.rules) {
      expect(
        cases.some((c) => c.want === 'accept' && c.name.startsWith(`rule ${rule.id}:`)),
        `${rule.id} accepted`,
      ).toBe(true);
      if (!reachable(model, rule)) continue;
      if (rule.kind === 'requiredWhen' && model.fields.find((f) => f.name === rule.field)?.required) {
        // The field is required anyway: the schema's `required` rejects the request before any rule runs.
        const path = `input.${rule.field}`;
        expect(
          cases.some(
            (c) =>
              c.name.startsWith(`rule ${rule.id}:`) && rejection(c)?.rule === 'required' && rejection(c)?.path === path,
          ),
          `${rule.id} rejected as required`,
        ).toBe(true);
        continue;
      }
      expect(
        cases.some((c) => rejection(c)?.rule === rule.id),
        `${rule.id} rejected`,
      ).toBe(true);
    }
  });

  it('covers every value of every enum field, and one outside', () => {
    for (const field of model.fields.filter((f) => Array.isArray(f.schema.enum))) {
      for (const value of field.schema.enum as unknown[]) {
        expect(
          cases.some((c) => c.want === 'accept' && c.input[field.name] === value),
          `${field.name}=${String(value)} accepted`,
        ).toBe(true);
      }
      const path = `input.${field.name}`;
      expect(
        cases.some((c) => rejection(c)?.path === path && rejection(c)?.rule === 'enum'),
        `${field.name} outside enum`,
      ).toBe(true);
    }
  });

  it('covers both ends of every numeric range', () => {
    for (const [path, schema] of numericPaths(model)) {
      const range = rangeOf(schema);
      const rules = schema.anyOf ? ['range_or_auto'] : ['minimum', 'maximum'];
      const rejected = (rule: string) => cases.some((c) => rejection(c)?.path === path && rejection(c)?.rule === rule);
      const accepted = (label: string) =>
        cases.some(
          (c) =>
            c.want === 'accept' &&
            c.name.startsWith(`${path.slice('input.'.length)}=`) &&
            c.name.includes(`(${label})`),
        );
      if (range.minimum !== undefined) {
        expect(accepted('min'), `${path} min accepted`).toBe(true);
        expect(rejected(rules[0]), `${path} below min rejected`).toBe(true);
      }
      if (range.maximum !== undefined) {
        expect(accepted('max'), `${path} max accepted`).toBe(true);
        expect(rejected(rules[rules.length - 1]), `${path} above max rejected`).toBe(true);
      }
      if (schema.anyOf) expect(accepted('auto'), `${path} auto accepted`).toBe(true);
    }
  });

  it('covers every required field, maxLength and maxItems', () => {
    const has = (path: string, rule: string) =>
      cases.some((c) => rejection(c)?.path === path && rejection(c)?.rule === rule);
    for (const field of model.fields) {
      const path = `input.${field.name}`;
      if (field.required) expect(has(path, 'required'), `${field.name} required`).toBe(true);
      if (field.schema.maxLength !== undefined) expect(has(path, 'maxLength'), `${field.name} maxLength`).toBe(true);
      if (field.schema.maxItems !== undefined) expect(has(path, 'maxItems'), `${field.name} maxItems`).toBe(true);
    }
    expect(has('input.not_a_field', 'unknown_field')).toBe(true);
  });
});
