import type { ErrorName } from '../generated/errors.js';
import { ApiError } from './errors.js';

/** The business codes of the console's own rules (spec/errors.yaml, names `console_*`). */
type ConsoleCode = Extract<ErrorName, `console_${string}`>;
/** The stable reason the console's answers carry in `data.reason`: the code's name without `console_`. */
export type ConsoleReason = ConsoleCode extends `console_${infer R}` ? R : never;

const PREFIX = 'console_';

/**
 * A refusal by the console's own rules (session, CSRF, sign-up, keys, webhook settings): an
 * ApiError whose text comes from spec/errors.yaml in the caller's language, with an English detail
 * for the operator (the CLI prints it; the pages' answers carry it beside the text).
 */
export function consoleRefusal(reason: ConsoleReason, detail: string): ApiError {
  const error = new ApiError(`${PREFIX}${reason}` as ConsoleCode);
  // The operator's English text is the error's message, as it was before these were ApiErrors (logs, the CLI, callers of webhooks/admin.ts).
  error.message = detail;
  return error;
}

/** The reason and detail of a console refusal; undefined for any other error. */
export function refusalOf(error: unknown): { reason: ConsoleReason; detail: string; name: ConsoleCode } | undefined {
  if (!(error instanceof ApiError) || !error.errorName.startsWith(PREFIX)) return undefined;
  const name = error.errorName as ConsoleCode;
  return { reason: name.slice(PREFIX.length) as ConsoleReason, detail: error.message, name };
}
