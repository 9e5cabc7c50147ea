/*
 * What a check reports: a field problem (path, rule, message reference) and a warning. The message
 * is a key of spec/errors.yaml with its placeholders, rendered in the caller's language by errors.ts.
 */

/** A message reference: a key of spec/errors.yaml and the values of its placeholders. */
export interface MessageRef {
  key: string;
  params: Record<string, string | number | MessageRef>;
}

/** One problem with one field: its path (input.duration_seconds), the rule it breaks, its message. */
export interface FieldIssue {
  path: string;
  rule: string;
  message: MessageRef;
}

export type ValidationResult = { ok: true; value: Record<string, unknown> } | { ok: false; errors: FieldIssue[] };

export interface Warning {
  code: string;
  path: string;
  message: MessageRef;
}
