/*
 * ajv's errors as field problems: a path from the top of the input (`input.loras[0].scale`), the
 * rule broken and a message key of spec/errors.yaml.
 */
import type { FieldIssue, MessageRef } from './issues.js';

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
