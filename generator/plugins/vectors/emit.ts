import type { Model } from '../../load/types.js';
import type { GeneratedFile, Plugin } from '../../plugin.js';
import { Cases, type Case } from './cases.js';
import { fieldVectors } from './field-vectors.js';
import { ruleVectors } from './rule-vectors.js';
import { sampleField, satisfy } from './rules.js';
import type { Input } from './sample.js';

export type { Case, Want } from './cases.js';

/**
 * Test vectors per model, derived from the model alone: inputs its validator must accept, and
 * inputs it must reject with a given path and rule. Any implementation of the model's input
 * contract can be checked against vectors/<model id>.json.
 */
export const vectorsPlugin: Plugin = {
  name: 'vectors',
  emit: ({ catalogue }) =>
    catalogue.models.map(
      (model): GeneratedFile => ({
        path: `vectors/${model.id}.json`,
        contents: `${JSON.stringify({ model: model.id, cases: modelVectors(model) }, null, 2)}\n`,
        inputs: model.sources,
      }),
    ),
};

/** Every vector of one model: the base input, then the field families, then the cross-field rules. */
export function modelVectors(model: Model): Case[] {
  const base = baseInput(model);
  const cases = new Cases(model, base);
  cases.accept('base input accepted', base, []);
  fieldVectors(cases);
  ruleVectors(cases);
  return cases.list;
}

/** Every required field with a sample value, plus whatever the rules need to hold (one reference for atLeastOne). */
export function baseInput(model: Model): Input {
  let input: Input = {};
  for (const field of model.fields.filter((f) => f.required))
    input = { ...input, [field.name]: sampleField(model, input, field.name) };
  const base = satisfy(model, input, new Set());
  if (!base) throw new Error(`${model.id}: no input with only the required fields can satisfy the rules`);
  return base;
}
