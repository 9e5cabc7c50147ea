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
      return new ApiError('invalid_parameter', { param: 'Content-Length' });
    // The path could not be decoded (`%E0%A4%A`) or one of its parameters is longer than the router
    // takes (maxParamLength): the path is what the caller got wrong.
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_INVALID_URL':
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ApiError('invalid_parameter', { param: 'path' });
    // @fastify/multipart: more parts, files or fields than the form may have, a file past its size.
    case 'FST_PARTS_LIMIT':
    case 'FST_FILES_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return new ApiError('payload_too_large', { param: 'body' });
    case 'FST_REQ_FILE_TOO_LARGE':
      return new ApiError('payload_too_large', { param: 'input_reference' });
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return new ApiError('unsupported_media_type');
    case 'FST_PROTO_VIOLATION':
    case 'FST_INVALID_JSON_FIELD_ERROR':
    case 'FST_MP_PREMATURE_CLOSE':
      return new ApiError('invalid_parameter', { param: 'body' });
  }
  if (
    error instanceof SyntaxError ||
    (e.statusCode === 400 && /JSON|prototype|constructor/i.test(String((error as Error).message)))
  ) {
    return new ApiError('malformed_json');
  }
  if (e.statusCode === 413) return new ApiError('payload_too_large');
  if (e.statusCode === 415) return new ApiError('unsupported_media_type');
  if (e.statusCode === 429) return new ApiError('rate_limited', { params: { retryAfter: 60 } });
  if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500)
    return new ApiError('invalid_parameter', { params: { param: 'request' } });
  return new ApiError('internal_error');
}

/** The envelope of an error: the business code, the message in the caller's language, the field problems. */
export function errorEnvelope(error: ApiError, language: Language, requestId: string) {
  const data = error.fieldErrors.length
    ? {
        errors: error.fieldErrors.map((f) => ({
          path: f.path,
          rule: f.rule,
          message: formatMessage(f.message, language),
        })),
      }
    : error.param
      ? { param: error.param }
      : null;
  return { code: error.code, msg: codeMessage(error.errorName, language, error.params), data, request_id: requestId };
}

export function sendEnvelopeError(request: FastifyRequest, reply: FastifyReply, error: ApiError, language: Language) {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply
    .status(error.status)
    .type('application/json')
    .send(errorEnvelope(error, language, request.id));
}
