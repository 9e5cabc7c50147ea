import { CODES, type ErrorName } from '../generated/errors.js';
import type { FieldIssue } from '../generated/support.js';

/** What an ApiError carries beside its code; every part is optional. */
export interface ApiErrorOptions {
  /** The request part at fault (`taskId`, `Idempotency-Key`, `input.prompt`): the answer's `param`, and the message's `{param}`. */
  param?: string;
  /** The placeholders of the code's message (`{required}`, `{retryAfter}`); `param` is one unless given here. */
  params?: Record<string, string | number>;
  /** Field problems of a body (invalid_input). */
  fieldErrors?: FieldIssue[];
  /** Headers the answer carries (Retry-After, Allow, Connection: close). */
  headers?: Record<string, string>;
}

/**
 * A client-facing failure: a business code from spec/errors.yaml, the placeholders of its message,
 * and optional data (field problems, the parameter at fault). The HTTP layer renders it in the
 * caller's language, as the envelope or as the compatible layer's error object.
 */
export class ApiError extends Error {
  readonly code: number;
  readonly status: number;
  readonly params: Record<string, string | number>;
  readonly fieldErrors: FieldIssue[];
  readonly param?: string;
  readonly headers: Record<string, string>;
  constructor(
    readonly errorName: ErrorName,
    options: ApiErrorOptions = {},
  ) {
    super(errorName);
    this.code = CODES[errorName].code;
    this.status = CODES[errorName].http;
    this.param = options.param;
    this.params = { ...(options.param === undefined ? {} : { param: options.param }), ...options.params };
    this.fieldErrors = options.fieldErrors ?? [];
    this.headers = options.headers ?? {};
  }

  /** Fastify and its plugins read the status from here. */
  get statusCode(): number {
    return this.status;
  }
}

export function invalidInput(errors: FieldIssue[]): ApiError {
  return new ApiError('invalid_input', { fieldErrors: errors, param: errors[0]?.path });
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
