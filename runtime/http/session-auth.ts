import type { FastifyRequest } from 'fastify';
import type { Language } from '../../generated/errors.js';
import { consoleRefusal } from '../console-refusal.js';
import { consoleLanguage, readCookie, requireRequestedWith, SESSION_COOKIE } from '../console/session-http.js';
import { findSession, type SessionUser } from '../console/users.js';
import type { Context } from '../context.js';

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The console's authenticator, beside the key authenticator (auth.ts): the operations of
 * generated/console/routes.ts are reached with the session cookie, never a key. An operation
 * with a session (route.auth) answers 401 without a live one, and on POST/PUT/PATCH/DELETE 403
 * unless X-CSRF-Token equals the session's token; sign-up and sign-in (no session yet) need
 * X-Requested-With instead. An operator's operation (route.role, the contract's operatorSession)
 * then answers 403 console_not_operator to a user without the role, before its input is read:
 * whatever a user sends there, nothing is read or changed. The language is the account's, then
 * Accept-Language.
 */
export class SessionAuthenticator {
  constructor(private readonly ctx: Context) {}

  async authenticate(
    request: FastifyRequest,
    needsSession: boolean,
    role?: 'operator',
  ): Promise<{ user?: SessionUser; language: Language }> {
    if (!needsSession) {
      requireRequestedWith(request);
      return { language: consoleLanguage(request) };
    }
    const cookie = readCookie(request, SESSION_COOKIE);
    const user = cookie ? await findSession(this.ctx.db, cookie, this.ctx.clock.now()) : undefined;
    if (!user) throw consoleRefusal('no_session', 'sign in first');
    // The refusal below is already in the account's language.
    request.language = consoleLanguage(request, user);
    if (STATE_CHANGING.has(request.method) && request.headers['x-csrf-token'] !== user.csrfToken)
      throw consoleRefusal('csrf', 'missing or wrong X-CSRF-Token header');
    if (role === 'operator' && user.role !== 'operator')
      throw consoleRefusal('not_operator', 'this operation is for operators (mediaforge users promote --email E)');
    return { user, language: request.language };
  }
}
