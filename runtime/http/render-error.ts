import type { FastifyReply, FastifyRequest } from 'fastify';
import { codeMessage, formatMessage, type Language } from '../../generated/errors.js';
import { ApiError } from '../errors.js';

/** Fastify's own errors for what a client sent, mapped to business codes; never a 500. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const e = error as { code?: string; statusCode?: number };
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('payload_too_large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('unsupported_media_type');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('malformed_json');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('invalid_parameter', { param: 'Content-Length' }, [], 'Content-Length');
  }
  if (error instanceof SyntaxError || (e.statusCode === 400 && /JSON|prototype|constructor/i.test(String((error as Error).message)))) {
    return new ApiError('malformed_json');
  }
  if (e.statusCode === 413) return new ApiError('payload_too_large');
  if (e.statusCode === 415) return new ApiError('unsupported_media_type');
  if (e.statusCode === 429) return new ApiError('rate_limited', { retryAfter: 60 });
  if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) return new ApiError('invalid_parameter', { param: 'request' });
  return new ApiError('internal_error');
}

/** The envelope of an error: the business code, the message in the caller's language, the field problems. */
export function errorEnvelope(error: ApiError, language: Language, requestId: string) {
  const data = error.fieldErrors.length
    ? { errors: error.fieldErrors.map((f) => ({ path: f.path, rule: f.rule, message: formatMessage(f.message, language) })) }
    : error.param
      ? { param: error.param }
      : null;
  return { code: error.code, msg: codeMessage(error.errorName, language, error.params), data, request_id: requestId };
}

export function sendEnvelopeError(request: FastifyRequest, reply: FastifyReply, error: ApiError, language: Language) {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.status(error.status).type('application/json').send(errorEnvelope(error, language, request.id));
}
