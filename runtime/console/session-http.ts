import type { FastifyReply, FastifyRequest } from 'fastify';
import { codeMessage, type Language } from '../../generated/errors.js';
import type { Context } from '../context.js';
import { ApiError } from '../errors.js';
import { pickLanguage } from '../language.js';
import { errorEnvelope } from '../http/render-error.js';
import { consoleRefusal, refusalOf } from '../console-refusal.js';
import { SESSION_TTL_MS, type SessionUser } from './users.js';

export const SESSION_COOKIE = 'mf_session';
/** Sign-up and sign-in (no session yet) must carry this header: a cross-site form cannot set it, and a cross-site fetch with it needs a CORS preflight the service never grants. */
export const REQUESTED_WITH = 'mediaforge-console';

/** A cookie's value; one that is not valid percent-encoding (`%E0%A4%A`) is treated as absent, like a missing cookie. */
export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) {
      try {
        return decodeURIComponent(part.slice(index + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

export function sessionCookie(ctx: Context, value: string, maxAgeMs = SESSION_TTL_MS): string {
  const secure = ctx.config.publicUrl.startsWith('https:') ? '; Secure' : '';
  return `${SESSION_COOKIE}=${encodeURIComponent(value)}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${Math.floor(maxAgeMs / 1000)}${secure}`;
}

/** Console texts: account language first (the setting the user chose in the console), then Accept-Language. */
export function consoleLanguage(request: FastifyRequest, user?: SessionUser): Language {
  return user?.language
    ? pickLanguage(undefined, user.language)
    : pickLanguage(request.headers['accept-language'], null);
}

/**
 * The one error shape of these pages: the API envelope (runtime errors translated by the error
 * catalogue); the console's own refusals (console_* codes of the same catalogue) with the HTTP
 * status as `code`, the stable reason and the English detail in `data`.
 */
export function sendConsoleError(request: FastifyRequest, reply: FastifyReply, error: unknown, language: Language) {
  const refusal = refusalOf(error);
  if (refusal) {
    const status = (error as ApiError).status;
    return reply.status(status).send({
      code: status,
      msg: codeMessage(refusal.name, language),
      data: { reason: refusal.reason, detail: refusal.detail },
      request_id: request.id,
    });
  }
  if (error instanceof ApiError) {
    for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
    return reply.status(error.status).send(errorEnvelope(error, language, request.id));
  }
  request.log.error({ err: error }, 'console error');
  return reply
    .status(500)
    .send({ code: 500, msg: codeMessage('console_internal', language), data: null, request_id: request.id });
}

/** Sign-up / sign-in: no session, so the custom header is the CSRF defence. */
export function requireRequestedWith(request: FastifyRequest): void {
  if (request.headers['x-requested-with'] !== REQUESTED_WITH)
    throw consoleRefusal('csrf', `missing X-Requested-With: ${REQUESTED_WITH} header`);
}
