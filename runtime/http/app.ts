import multipart from '@fastify/multipart';
import Fastify, {
  LogController,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type RouteOptions,
} from 'fastify';
import type { Language } from '../../generated/errors.js';
import { routes as consoleRoutes, type RouteDef as ConsoleRouteDef } from '../../generated/console/routes.js';
import { requestRules as consoleRequestRules } from '../../generated/console/requests/index.js';
import { requestRules, type RequestRules } from '../../generated/requests/index.js';
import { routes, type RouteDef, type RouteReply } from '../../generated/routes.js';
import type { Caller } from '../accounts/accounts.js';
import type { Config } from '../config.js';
import type { Context } from '../context.js';
import { multipartLimits } from '../compat/form.js';
import { newId } from '../ids.js';
import { ApiError } from '../errors.js';
import { ApiRequest } from './api-request.js';
import { readRequestInput } from './request-input.js';
import { registerOps } from './routes/ops.js';
import { registerUpstreamCallbacks } from './routes/upstream-callback.js';
import { registerPaymentsWebhook } from './routes/payments-webhook.js';
import { registerDocs } from '../../docs-site/serve.js';
import { registerConsolePages } from './routes/console-pages.js';
import { sendConsoleError } from '../console/session-http.js';
import type { SessionUser } from '../console/users.js';
import { Authenticator, refuseKeyInQuery } from './auth.js';
import { registerRateLimits, type RateLimits } from './rate-limits.js';
import { pickLanguage } from '../language.js';
import { isCompatUrl, sendCompatError } from './compat-error.js';
import { frameworkErrorHandlers } from './framework-errors.js';
import { securityHeaders } from './security-headers.js';
import { registerJsonBodyParser } from './json-body.js';
import { sendEnvelopeError, toApiError } from './render-error.js';
import { createConsoleHandlers, createHandlers } from './handlers.js';
import { SessionAuthenticator } from './session-auth.js';
import { registerLanding } from './routes/landing.js';
import { RouteMethods } from './route-methods.js';

declare module 'fastify' {
  interface FastifyRequest {
    caller?: Caller;
    /** The console session's user (console operations, runtime/http/session-auth.ts). */
    sessionUser?: SessionUser;
    language: Language;
  }
  interface FastifyContextConfig {
    /** The route's layer, from the generated route tables: which shape its errors take. */
    layer?: BoundRoute['layer'];
  }
}

export interface AppOptions {
  /** Extra handlers for routes outside the contract (health, metrics, docs). */
  extend?: (app: FastifyInstance) => void | Promise<void>;
}

/**
 * The Fastify instance, before any route: made first so that its logger (pino at info, or silent)
 * is the service's logger from the start (`Context.log`); `buildApp` then binds the routes.
 */
export function createHttpServer(config: Config, options: { logger?: boolean } = {}): FastifyInstance {
  const { frameworkErrors, clientErrorHandler } = frameworkErrorHandlers(securityHeaders(config));
  return Fastify({
    logger: options.logger ? { level: 'info' } : false,
    logController: new AccessLog(),
    bodyLimit: config.bodyLimitBytes,
    genReqId: () => newId('req'),
    requestIdHeader: false,
    // The contract bounds each path parameter (512 characters at most), and its validator names the
    // one too long; routing refuses only what is beyond any of them (400, param `path`).
    routerOptions: { maxParamLength: 1024 },
    return503OnClosing: true,
    // Behind the operator's reverse proxies, X-Forwarded-For names the client; from anyone else it is ignored.
    ...(config.trustedProxies.length ? { trustProxy: config.trustedProxies } : {}),
    // Errors Fastify or Node's HTTP parser answer before any hook: in the layer's own shape too.
    frameworkErrors,
    clientErrorHandler,
    // Fastify's JSON parser drops __proto__ and constructor.prototype keys by rejecting the body.
  });
}

/** The HTTP face of the service: every operation of the generated route table, bound to its handler, on `app` (createHttpServer). */
export async function buildApp(ctx: Context, app: FastifyInstance, options: AppOptions = {}): Promise<FastifyInstance> {
  // Only JSON bodies are requests; Fastify's default text/plain parser would hand a string to the
  // handlers, which then report invalid input instead of the wrong content type (40004).
  app.removeContentTypeParser('text/plain');
  registerJsonBodyParser(app);
  app.decorateRequest('caller', undefined);
  app.decorateRequest('sessionUser', undefined);
  app.decorateRequest('language', 'en');
  const routeMethods = new RouteMethods();
  routeMethods.watch(app);
  const authenticator = new Authenticator(ctx);

  // Security headers on every answer, errors and 404s included (set before the limiter, so a 429
  // has them too). Set on the raw response: a header the route sets (pages set their own policy,
  // runtime/console/pages.ts, docs-site/serve.ts) wins over them when the answer is written.
  const security = Object.entries(securityHeaders(ctx.config));
  app.addHook('onRequest', async (request, reply) => {
    ctx.apiFirst.requestSeen();
    for (const [name, value] of security) reply.raw.setHeader(name, value);
    reply.header('X-Request-Id', request.id);
    request.language = pickLanguage(request.headers['accept-language'], null);
  });

  // Per key id after authentication, per client address elsewhere (runtime/http/rate-limits.ts).
  const limits = await registerRateLimits(app, ctx, authenticator);

  app.setErrorHandler((error, request, reply) => {
    const apiError = toApiError(error);
    // The console's refusals and its own failures in its shape; what Fastify refused before the
    // console's code ran (a body that did not parse) in the envelope, as for any route.
    if (layerOf(request) === 'console' && (error instanceof ApiError || apiError.errorName === 'internal_error')) {
      reply.header('Cache-Control', 'no-store');
      return sendConsoleError(request, reply, error, request.language);
    }
    if (apiError.errorName === 'internal_error') request.log.error({ err: error }, 'unhandled error');
    return layerOf(request) === 'compatible'
      ? sendCompatError(request, reply, apiError, request.language)
      : sendEnvelopeError(request, reply, apiError, request.language);
  });
  app.setNotFoundHandler((request, reply) => {
    // A path that exists under other methods: 405 with Allow; otherwise 404.
    const allow = routeMethods.allowed(request.url.split('?', 1)[0]);
    const error = allow.length
      ? new ApiError('method_not_allowed', {
          params: { method: request.method, allow: allow.join(', ') },
          headers: {
            Allow: allow.join(', '),
          },
        })
      : new ApiError('route_not_found');
    return layerOf(request) === 'compatible'
      ? sendCompatError(request, reply, error, request.language)
      : sendEnvelopeError(request, reply, error, request.language);
  });

  const handlers = createHandlers();
  const consoleHandlers = createConsoleHandlers(ctx, limits);
  const edge: Edge = { ctx, limits, sessions: new SessionAuthenticator(ctx) };
  // The API's operations and the console's: one table of bound routes, each with its handler and its rules.
  const table: BoundRoute[] = [
    ...routes.map((route) => ({
      ...route,
      handler: handlers[route.operationId] as BoundHandler,
      rules: requestRules[route.operationId],
    })),
    ...consoleRoutes.map((route) => ({
      ...route,
      handler: consoleHandlers[route.operationId] as BoundHandler,
      rules: consoleRequestRules[route.operationId],
    })),
  ];
  const bind = (scope: FastifyInstance, route: BoundRoute) => {
    bindRoute(scope, edge, route);
    // A parameter the contract lets span segments (model ids hold slashes) is answered unencoded too.
    if (route.spansSegments)
      bindRoute(scope, edge, { ...route, fastifyPath: route.fastifyPath.replace(`:${route.spansSegments}`, '*') });
  };
  for (const route of table) if (route.body === 'json') bind(app, route);
  // Raw bodies (PUT /uploads/{fileId}) are the bytes of any declared type as a stream (the signed
  // ticket caps their size, not the JSON body limit); only this scope has the catch-all parser.
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    for (const route of table) if (route.body === 'raw') bind(scope, route);
  });
  // multipart/form-data (the openai SDK's encoding for POST /v1/videos) besides JSON: the parser
  // lives in its own scope, so every other route still answers a multipart body with 40004.
  await app.register(async (scope) => {
    await scope.register(multipart, { limits: multipartLimits(ctx.config.bodyLimitBytes), throwFileSizeLimit: true });
    for (const route of table) if (route.body === 'multipart') bind(scope, route);
  });
  registerOps(app, ctx);
  registerLanding(app); // / (runtime/http/routes/landing.ts)
  await registerUpstreamCallbacks(app, ctx); // POST /upstream-callbacks/...: an upstream's "the job ended" wakes the task's poll
  await registerPaymentsWebhook(app, ctx); // POST /payments/stripe/webhook: the payment processor's events (runtime/payments/)
  await registerDocs(app); // /docs, /openapi.json, /openapi.yaml (docs-site/serve.ts)
  await registerConsolePages(app, ctx); // /playground, /console and their scripts (runtime/http/routes/console-pages.ts)
  if (options.extend) await options.extend(app);
  return app;
}

/**
 * One access line per request instead of Fastify's two (half the log writes under load), and
 * without the query string, where a caller may have put an API key. Fastify's other log lines stay.
 */
class AccessLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = {
      method: request.method,
      path: request.url.split('?', 1)[0],
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime),
    };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request');
  }
}

/**
 * The layer whose shape an error takes: the matched route's, from the contract; a request that
 * matched no route (404, 405, a target that did not parse) has only its URL to go by.
 */
function layerOf(request: FastifyRequest): BoundRoute['layer'] {
  return request.routeOptions.config?.layer ?? (isCompatUrl(request.raw.url) ? 'compatible' : 'envelope');
}

/** What a bound route's handler is: any operation's, given its own request type by the Handlers interfaces. */
type BoundHandler = (request: ApiRequest) => Promise<RouteReply<RouteDef['operationId']>>;

/** A route of either generated table, with its handler and the contract's rules for its requests. */
type BoundRoute = (RouteDef | ConsoleRouteDef) & { handler: BoundHandler; rules: RequestRules };

/** What every bound route shares: the context, the key authenticator (through the limits) and the session authenticator. */
interface Edge {
  ctx: Context;
  limits: RateLimits;
  sessions: SessionAuthenticator;
}

/** The hooks that establish who is asking: a session (console), a key (counted per key id), or nobody (signed links). */
function authentication(edge: Edge, route: BoundRoute): Partial<RouteOptions> {
  if (route.layer === 'console')
    return {
      config: { layer: route.layer },
      // After the body is read, as the console always answered: a body that does not parse is 40003 first.
      preValidation: async (request: FastifyRequest, reply: FastifyReply) => {
        reply.header('Cache-Control', 'no-store');
        const { user, language } = await edge.sessions.authenticate(
          request,
          route.auth,
          'role' in route ? route.role : undefined,
        );
        request.sessionUser = user;
        request.language = language;
      },
    };
  // A route that needs a key is counted per key id once the key is known (a failed attempt per
  // client address), before the body is read; the others per client address by the global hook.
  if (route.auth)
    return {
      config: { rateLimit: false, layer: route.layer },
      onRequest: async (request: FastifyRequest, reply: FastifyReply) => {
        request.caller = await edge.limits.authenticate(request, reply);
        request.language = pickLanguage(request.headers['accept-language'], request.caller.language);
      },
    };
  return {
    config: { layer: route.layer },
    preParsing: async (request: FastifyRequest, _reply: FastifyReply, payload) => {
      refuseKeyInQuery(request);
      return payload;
    },
  };
}

function bindRoute(app: FastifyInstance, edge: Edge, route: BoundRoute) {
  app.route({
    method: route.method,
    url: route.fastifyPath,
    ...authentication(edge, route),
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      // Wildcard form of a segment-spanning parameter: the value under the parameter's own name.
      if (route.spansSegments) {
        const params = request.params as Record<string, string>;
        if (params['*'] !== undefined) params[route.spansSegments] = params['*'];
      }
      const input = readRequestInput(route.rules, request);
      const principal = { caller: request.caller, user: request.sessionUser };
      const result = await route.handler(new ApiRequest(edge.ctx, request, reply, principal, request.language, input));
      if (reply.sent) return reply;
      for (const [name, value] of Object.entries(result.headers ?? {})) reply.header(name, value);
      reply.status(result.status);
      if ('raw' in result) return reply.send(result.raw);
      if (route.layer === 'compatible') return reply.send(result.data);
      return reply.send({ code: 200, msg: 'success', data: result.data, request_id: request.id });
    },
  });
}
