import type { FastifyReply, FastifyRequest } from 'fastify';
import { codeMessage, formatMessage, type Language } from '../../generated/errors.js';
import type { ApiError } from '../errors.js';

const TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'invalid_request_error',
  402: 'insufficient_quota',
  403: 'permission_error',
  404: 'invalid_request_error',
  405: 'invalid_request_error',
  409: 'invalid_request_error',
  413: 'invalid_request_error',
  429: 'rate_limit_error',
};

/**
 * Whether a request belongs to the compatible layer (/v1), from the raw request target alone: it
 * may be one that did not parse (a bad percent-encoding) or absolute-form (`http://host/v1/...`).
 */
export function isCompatUrl(url: unknown): boolean {
  if (typeof url !== 'string') return false;
  const path = url.replace(/^[a-z][a-z0-9+.-]{0,20}:\/\/[^/?#]*/i, '');
  return path === '/v1' || path.startsWith('/v1/') || path.startsWith('/v1?');
}

/** The compatible layer's error object: {error: {message, type, param, code}} with x-request-id. */
export function compatErrorBody(error: ApiError, language: Language) {
  const first = error.fieldErrors[0];
  const message = first ? formatMessage(first.message, language) : codeMessage(error.errorName, language, error.params);
  const param = first ? first.path.replace(/^input\./, '') : (error.param ?? null);
  return { error: { message, type: TYPES[error.status] ?? 'server_error', param, code: error.errorName } };
}

export function sendCompatError(request: FastifyRequest, reply: FastifyReply, error: ApiError, language: Language) {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.status(error.status).type('application/json').send(compatErrorBody(error, language));
}
