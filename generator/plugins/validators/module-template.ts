/*
 * A model's validator: ajv's compiled JSON Schema (the .schema.js module beside this one,
 * compiled at generation time: the runtime never compiles a schema), the model's cross-field
 * rules, and validateInput returning the normalized input (defaults applied) or every field problem.
 */
import {
  checkRules,
  cloneJson,
  mapAjvErrors,
  type AutoRange,
  type CrossFieldRule,
  type ValidationResult,
} from '../support/template.js';
import { schemaValidate } from './schema-template.js';

/** The message key of each `pattern` of the schema that has its own (by schema path). */
const PATTERN_MESSAGES: Record<string, string> = {};
/** Fields whose value is a range or an "auto" value, by the schema path of their anyOf. */
const AUTO_RANGES: Record<string, AutoRange> = {};
/** Cross-field rules of the model (spec rules:), checked on an input that passed the schema. */
const RULES: readonly CrossFieldRule[] = [];

/** Validates a request input; on success returns it with the defaults filled in. */
export function validateInput(input: unknown): ValidationResult {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return {
      ok: false,
      errors: [{ path: 'input', rule: 'type', message: { key: 'type', params: { field: 'input', type: 'object' } } }],
    };
  }
  const value = cloneJson(input as Record<string, unknown>);
  if (!schemaValidate(value))
    return { ok: false, errors: mapAjvErrors(schemaValidate.errors ?? [], PATTERN_MESSAGES, AUTO_RANGES) };
  const errors = checkRules(value, RULES);
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value };
}
