import { CODES, type ErrorName } from '../generated/errors.js';
import type { FieldIssue } from '../generated/support.js';

/**
 * A client-facing failure: a business code from spec/errors.yaml, the placeholders of its message,
 * and optional data (field problems, the parameter at fault). The HTTP layer renders it in the
 * caller's language, as the envelope or as the compatible layer's error object.
 */
export class ApiError extends Error {
  readonly code: number;
  readonly status: number;
  constructor(
    readonly errorName: ErrorName,
    readonly params: Record<string, string | number> = {},
    readonly fieldErrors: FieldIssue[] = [],
    readonly param?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(errorName);
    this.code = CODES[errorName].code;
    this.status = CODES[errorName].http;
  }

  /** Fastify and its plugins read the status from here. */
  get statusCode(): number {
    return this.status;
  }
}

export function invalidInput(errors: FieldIssue[]): ApiError {
  return new ApiError('invalid_input', {}, errors, errors[0]?.path);
}

/** A field problem outside a model's input (the envelope fields of a request body). */
export function fieldIssue(
  path: string,
  rule: string,
  key: string,
  params: Record<string, string | number> = {},
): FieldIssue {
  return { path, rule, message: { key, params: { field: path, ...params } } };
}
