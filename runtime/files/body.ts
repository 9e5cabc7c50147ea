import type { FieldIssue } from '../../generated/support.js';
import { fieldIssue, invalidInput } from '../errors.js';

/** One field of a small JSON body (the files and assets operations), as its contract schema states it. */
export type FieldRule =
  | { type: 'string'; required?: boolean; minLength?: number; maxLength?: number; pattern?: RegExp; patternKey?: string }
  | { type: 'integer'; required?: boolean; minimum?: number; maximum?: number };

/**
 * Checks a JSON body against its fields (unknown fields refused, as the contract's
 * additionalProperties: false says) and returns it; every problem is one entry of 400 40001.
 * `optional`: a missing body counts as `{}` (commitFile).
 */
export function readBody(body: unknown, rules: Record<string, FieldRule>, optional = false): Record<string, unknown> {
  if ((body === undefined || body === null) && optional) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalidInput([fieldIssue('body', 'type', 'type', { type: 'object' })]);
  const b = body as Record<string, unknown>;
  const issues: FieldIssue[] = [];
  for (const key of Object.keys(b)) if (!Object.hasOwn(rules, key)) issues.push(fieldIssue(key, 'unknown_field', 'unknown_field'));
  for (const [name, rule] of Object.entries(rules)) {
    const value = b[name];
    if (value === undefined) {
      if (rule.required) issues.push(fieldIssue(name, 'required', 'required'));
      continue;
    }
    if (rule.type === 'string') {
      if (typeof value !== 'string') issues.push(fieldIssue(name, 'type', 'type', { type: 'string' }));
      else if (rule.minLength !== undefined && value.length < rule.minLength) issues.push(fieldIssue(name, 'minLength', 'min_length', { limit: rule.minLength }));
      else if (rule.maxLength !== undefined && value.length > rule.maxLength) issues.push(fieldIssue(name, 'maxLength', 'max_length', { limit: rule.maxLength }));
      else if (rule.pattern && !rule.pattern.test(value)) issues.push(fieldIssue(name, 'pattern', rule.patternKey ?? 'pattern'));
    } else if (!Number.isSafeInteger(value)) issues.push(fieldIssue(name, 'type', 'type', { type: 'integer' }));
    else if (rule.minimum !== undefined && (value as number) < rule.minimum) issues.push(fieldIssue(name, 'minimum', 'minimum', { limit: rule.minimum }));
    else if (rule.maximum !== undefined && (value as number) > rule.maximum) issues.push(fieldIssue(name, 'maximum', 'maximum', { limit: rule.maximum }));
  }
  if (issues.length) throw invalidInput(issues);
  return b;
}

/** A display name: trimmed of control characters, 1 to 255 characters. */
export const NAME_RULE: FieldRule = { type: 'string', minLength: 1, maxLength: 255, pattern: /^[^\u0000-\u001f\u007f]+$/ };
