import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { newId } from '../ids.js';
import { ApiError } from '../errors.js';
import { compatErrorBody, isCompatUrl, sendCompatError } from './compat-error.js';
import { pickLanguage } from '../language.js';
import { errorEnvelope, sendEnvelopeError, toApiError } from './render-error.js';

/**
 * Errors Fastify answers before any hook runs (a path it cannot decode, `%E0%A4%A`; a path
 * parameter past maxParamLength): the layer's own shape (the envelope, or the compatible layer's
 * error object under /v1) in the caller's language, with the request id, like every other error.
 * The request's URL may be one that did not parse: only its raw text is read.
 */
function frameworkErrors(
  securityHeaders: Readonly<Record<string, string>>,
  error: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const language = pickLanguage(request.headers['accept-language'], null);
  reply.header('X-Request-Id', request.id).headers(securityHeaders);
  const apiError = toApiError(error);
  return isCompatUrl(request.raw.url)
    ? sendCompatError(request, reply, apiError, language)
    : sendEnvelopeError(request, reply, apiError, language);
}

/** What Node's HTTP parser refused (`HPE_*`), as a business error. */
function clientApiError(code: string | undefined): ApiError {
  if (code === 'HPE_HEADER_OVERFLOW' || code === 'HPE_INVALID_HEADER_TOKEN' || code === 'HPE_UNEXPECTED_CONTENT_LENGTH')
    return new ApiError('invalid_parameter', { param: 'headers' });
  if (code === 'HPE_INVALID_URL') return new ApiError('invalid_parameter', { param: 'path' });
  return new ApiError('invalid_parameter', { param: 'request' });
}

/**
 * Requests Node's HTTP parser refuses (invalid characters in a header or the request line,
 * headers past their size) never reach Fastify: the answer is written to the socket here, in the
 * layer's shape. The path and Accept-Language are read, best effort, from the bytes received.
 */
function clientErrorHandler(
  securityHeaders: Readonly<Record<string, string>>,
  error: Error & { code?: string; rawPacket?: unknown },
  socket: Socket,
): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // A response already under way on this connection (pipelining) cannot be followed by another;
  // a request that timed out has nobody waiting. Node's own handler gives up in both cases too.
  const responding = (socket as Socket & { _httpMessage?: unknown })._httpMessage;
  if (!socket.writable || responding || error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    socket.destroy();
    return;
  }
  const raw = Buffer.isBuffer(error.rawPacket) ? error.rawPacket.subarray(0, 16_384).toString('latin1') : '';
  const target = /^[A-Z]{1,20} (\S{1,8192})/.exec(raw)?.[1];
  const acceptLanguage = /\r\naccept-language:[ \t]*([^\r\n]{0,512})/i.exec(raw)?.[1];
  const language = pickLanguage(acceptLanguage, null);
  const apiError = clientApiError(error.code);
  const requestId = newId('req');
  const body = JSON.stringify(
    isCompatUrl(target) ? compatErrorBody(apiError, language) : errorEnvelope(apiError, language, requestId),
  );
  socket.end(
    `HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\n` +
      Object.entries(securityHeaders)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('') +
      `Connection: close\r\n\r\n${body}`,
  );
}

/**
 * Fastify's two handlers for what is answered before any hook, helmet's included: they set the
 * service's security headers themselves (runtime/http/security-headers.ts).
 */
export function frameworkErrorHandlers(securityHeaders: Readonly<Record<string, string>>) {
  return {
    frameworkErrors: (error: unknown, request: FastifyRequest, reply: FastifyReply) =>
      frameworkErrors(securityHeaders, error, request, reply),
    clientErrorHandler: (error: Error & { code?: string; rawPacket?: unknown }, socket: Socket) =>
      clientErrorHandler(securityHeaders, error, socket),
  };
}
