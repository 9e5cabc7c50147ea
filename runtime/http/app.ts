import multipart from '@fastify/multipart';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Language } from '../../generated/errors.js';
import { routes, type Handlers, type RouteDef } from '../../generated/routes.js';
import type { Caller } from '../accounts/accounts.js';
import type { Config } from '../config.js';
import type { Context } from '../context.js';
import { multipartLimits } from '../compat/form.js';
import { newId } from '../ids.js';
import { ApiError } from '../errors.js';
import { ApiRequest, type ApiRequests } from './api-request.js';
import { readRequestInput } from './request-input.js';
import { registerOps } from './routes/ops.js';
import { registerUpstreamCallbacks } from './routes/upstream-callback.js';
import { registerDocs } from '../../docs-site/serve.js';
import { registerConsole } from '../console/pages.js';
import { Authenticator, refuseKeyInQuery } from './auth.js';
import { registerRateLimits, type RateLimits } from './rate-limits.js';
import { pickLanguage } from './language.js';
import { isCompatUrl, sendCompatError } from './compat-error.js';
import { frameworkErrorHandlers } from './framework-errors.js';
import { securityHeaders } from './security-headers.js';
import { registerJsonBodyParser } from './json-body.js';
import { sendEnvelopeError, toApiError } from './render-error.js';
import { createHandlers } from './handlers.js';
import { registerLanding } from './routes/landing.js';
import { RouteMethods } from './route-methods.js';

declare module 'fastify' {
  interface FastifyRequest {
    caller?: Caller;
    language: Language;
  }
  interface FastifyContextConfig {
    /** The route's layer, from the generated route table: which shape its errors take. */
    layer?: RouteDef['layer'];
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
  app.decorateRequest('language', 'en');
  const routeMethods = new RouteMethods();
  routeMethods.watch(app);
  const authenticator = new Authenticator(ctx);

  // Security headers on every answer, errors and 404s included (set before the limiter, so a 429
  // has them too). Set on the raw response: a header the route sets (pages set their own policy,
  // runtime/console/pages.ts, docs-site/serve.ts) wins over them when the answer is written.
  const security = Object.entries(securityHeaders(ctx.config));
  app.addHook('onRequest', async (request, reply) => {
    for (const [name, value] of security) reply.raw.setHeader(name, value);
    reply.header('X-Request-Id', request.id);
    request.language = pickLanguage(request.headers['accept-language'], null);
  });

  // Per key id after authentication, per client address elsewhere (runtime/http/rate-limits.ts).
  const limits = await registerRateLimits(app, ctx, authenticator);

  app.setErrorHandler((error, request, reply) => {
    const apiError = toApiError(error);
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
  const bind = (scope: FastifyInstance, route: RouteDef) => {
    bindRoute(scope, ctx, limits, route, handlers);
    // A parameter the contract lets span segments (model ids hold slashes) is answered unencoded too.
    if (route.spansSegments)
      bindRoute(
        scope,
        ctx,
        limits,
        { ...route, fastifyPath: route.fastifyPath.replace(`:${route.spansSegments}`, '*') },
        handlers,
      );
  };
  for (const route of routes) if (route.body === 'json') bind(app, route);
  // Raw bodies (PUT /uploads/{fileId}) are the bytes of any declared type as a stream (the signed
  // ticket caps their size, not the JSON body limit); only this scope has the catch-all parser.
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    for (const route of routes) if (route.body === 'raw') bind(scope, route);
  });
  // multipart/form-data (the openai SDK's encoding for POST /v1/videos) besides JSON: the parser
  // lives in its own scope, so every other route still answers a multipart body with 40004.
  await app.register(async (scope) => {
    await scope.register(multipart, { limits: multipartLimits(ctx.config.bodyLimitBytes), throwFileSizeLimit: true });
    for (const route of routes) if (route.body === 'multipart') bind(scope, route);
  });
  registerOps(app, ctx);
  registerLanding(app); // / (runtime/http/routes/landing.ts)
  await registerUpstreamCallbacks(app, ctx); // POST /upstream-callbacks/...: an upstream's "the job ended" wakes the task's poll
  await registerDocs(app); // /docs, /openapi.json, /openapi.yaml (docs-site/serve.ts)
  await registerConsole(app, ctx, limits); // /playground, /console and their session APIs (runtime/console/)
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
function layerOf(request: FastifyRequest): RouteDef['layer'] {
  return request.routeOptions.config?.layer ?? (isCompatUrl(request.raw.url) ? 'compatible' : 'envelope');
}

function bindRoute(
  app: FastifyInstance,
  ctx: Context,
  limits: RateLimits,
  route: RouteDef,
  handlers: Handlers<ApiRequests>,
) {
  const handler = handlers[route.operationId] as (
    request: ApiRequest,
  ) => ReturnType<Handlers<ApiRequests>[typeof route.operationId]>;
  app.route({
    method: route.method,
    url: route.fastifyPath,
    // A route that needs a key is counted per key id once the key is known (a failed attempt per
    // client address), before the body is read; the others per client address by the global hook.
    ...(route.auth
      ? {
          config: { rateLimit: false, layer: route.layer },
          onRequest: async (request: FastifyRequest, reply: FastifyReply) => {
            request.caller = await limits.authenticate(request, reply);
            request.language = pickLanguage(request.headers['accept-language'], request.caller.language);
          },
        }
      : {
          config: { layer: route.layer },
          preParsing: async (request: FastifyRequest, _reply: FastifyReply, payload) => {
            refuseKeyInQuery(request);
            return payload;
          },
        }),
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      // Wildcard form of a segment-spanning parameter: the value under the parameter's own name.
      if (route.spansSegments) {
        const params = request.params as Record<string, string>;
        if (params['*'] !== undefined) params[route.spansSegments] = params['*'];
      }
      const input = readRequestInput(route.operationId, request);
      const result = await handler(new ApiRequest(ctx, request, reply, request.caller, request.language, input));
      if (reply.sent) return reply;
      for (const [name, value] of Object.entries(result.headers ?? {})) reply.header(name, value);
      reply.status(result.status);
      if ('raw' in result) return reply.send(result.raw);
      if (route.layer === 'compatible') return reply.send(result.data);
      return reply.send({ code: 200, msg: 'success', data: result.data, request_id: request.id });
    },
  });
}
