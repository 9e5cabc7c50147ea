/**
 * Errors of the client. An answer of the API that is not a success becomes an ApiError subclass
 * chosen by its business code (docs/contracts.md): branch on the class or on `.code`, never on the
 * text. Every ApiError carries the request id (envelope `request_id`, or the `X-Request-Id` header).
 */
import type { FieldError } from '../types.js';

/** Base of every error this client throws. */
export class MediaforgeError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

export interface ApiErrorInit {
  status: number;
  code: number;
  msg: string;
  requestId: string | null;
  data: unknown;
  headers: Headers;
}

/**
 * An error answer of the API. `code` is the five-digit business code (its first three digits are
 * the HTTP status); an answer that is not an envelope (a proxy's page, an edge timeout 524) gets
 * `code` = status x 100.
 */
export class ApiError extends MediaforgeError {
  readonly status: number;
  readonly code: number;
  /** The human-readable message, in the language asked for (Accept-Language or the account's). */
  readonly msg: string;
  readonly requestId: string | null;
  /** The envelope's `data` (field errors, the parameter at fault), or null. */
  readonly data: unknown;
  readonly headers: Headers;

  constructor(init: ApiErrorInit) {
    super(`${init.status} ${init.code}: ${init.msg}${init.requestId ? ` (request ${init.requestId})` : ''}`);
    this.status = init.status;
    this.code = init.code;
    this.msg = init.msg;
    this.requestId = init.requestId;
    this.data = init.data;
    this.headers = init.headers;
  }
}

/** 400xx: the request is malformed (see InvalidInputError for field problems). */
export class BadRequestError extends ApiError {}

/** 40001: the input breaks the model's published limits; `fields` lists every problem. */
export class InvalidInputError extends BadRequestError {
  readonly fields: FieldError[];
  constructor(init: ApiErrorInit) {
    super(init);
    const errors = (init.data as { errors?: unknown } | null)?.errors;
    this.fields = Array.isArray(errors) ? (errors as FieldError[]) : [];
  }
}

/** 401xx: the API key is missing, malformed, unknown or revoked (or was sent in the query string). */
export class AuthenticationError extends ApiError {}

/** 40201: the available balance does not cover the hold. */
export class InsufficientCreditsError extends ApiError {}

/** 403xx: the key may not do this (including locked or full asset storage). */
export class PermissionDeniedError extends ApiError {}

/** 404xx: unknown, or another key's or account's (indistinguishable by design). */
export class NotFoundError extends ApiError {}

/** 409xx other than the ones below. */
export class ConflictError extends ApiError {}

/** 40901: the quote expired, is another key's, for another request or at another price. */
export class QuoteConflictError extends ConflictError {}

/** 40902 (the key was used for a different request) or 40903 (a sibling key used it). */
export class IdempotencyConflictError extends ConflictError {}

/** 40904: the first request with this Idempotency-Key has not finished; retried automatically. */
export class IdempotencyInProgressError extends ConflictError {}

/** 413xx: the body is over the limit. */
export class PayloadTooLargeError extends ApiError {}

/** 42901: rate limited; `retryAfterSeconds` is the server's Retry-After. */
export class RateLimitError extends ApiError {
  readonly retryAfterSeconds: number | null;
  constructor(init: ApiErrorInit) {
    super(init);
    const ms = parseRetryAfterMs(init.headers.get('retry-after'));
    this.retryAfterSeconds = ms === null ? null : Math.ceil(ms / 1000);
  }
}

/** 5xx: a fault of the service, or no deployment / the service unavailable (503xx). */
export class InternalServerError extends ApiError {}
export class NotImplementedError extends InternalServerError {}
export class ServiceUnavailableError extends InternalServerError {}

/** No HTTP answer: the connection failed or was cut. */
export class ConnectionError extends MediaforgeError {}

/** No answer within the request's time limit, or `waitFor` ran out of time. */
export class TimeoutError extends MediaforgeError {}

/** A webhook that does not verify: bad or missing signature, stale timestamp, unparsable body. */
export class WebhookVerificationError extends MediaforgeError {}

/** The class of an error answer, by business code first, then by HTTP status. */
export function errorClassFor(code: number, status: number): new (init: ApiErrorInit) => ApiError {
  switch (code) {
    case 40001:
      return InvalidInputError;
    case 40201:
      return InsufficientCreditsError;
    case 40901:
      return QuoteConflictError;
    case 40902:
    case 40903:
      return IdempotencyConflictError;
    case 40904:
      return IdempotencyInProgressError;
    case 42901:
      return RateLimitError;
    case 50101:
      return NotImplementedError;
  }
  const family = Math.floor(code / 100) || status;
  if (family === 400) return BadRequestError;
  if (family === 401) return AuthenticationError;
  if (family === 402) return InsufficientCreditsError;
  if (family === 403) return PermissionDeniedError;
  if (family === 404) return NotFoundError;
  if (family === 409) return ConflictError;
  if (family === 413) return PayloadTooLargeError;
  if (family === 429) return RateLimitError;
  if (family === 501) return NotImplementedError;
  if (family === 503) return ServiceUnavailableError;
  if (family >= 500) return InternalServerError;
  return ApiError;
}

/** Builds the error of a non-2xx answer from its (possibly non-envelope) body. */
export function errorFromResponse(status: number, body: unknown, headers: Headers): ApiError {
  const envelope =
    typeof body === 'object' && body !== null && typeof (body as { code?: unknown }).code === 'number'
      ? (body as { code: number; msg?: unknown; data?: unknown; request_id?: unknown })
      : undefined;
  const code = envelope ? envelope.code : status * 100;
  const init: ApiErrorInit = {
    status,
    code,
    msg:
      typeof envelope?.msg === 'string'
        ? envelope.msg
        : typeof body === 'string' && body.length > 0 && body.length < 300
          ? body
          : `HTTP ${status}`,
    requestId: typeof envelope?.request_id === 'string' ? envelope.request_id : headers.get('x-request-id'),
    data: envelope?.data ?? null,
    headers,
  };
  const ErrorClass = errorClassFor(code, status);
  return new ErrorClass(init);
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfterMs(value: string | null | undefined, now = Date.now()): number | null {
  if (value === null || value === undefined || value.trim() === '') return null;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
