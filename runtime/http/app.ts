import { createHash } from 'node:crypto';
import multipart from '@fastify/multipart';
import rateLimit from '@fastify/rate-limit';
import { Redis } from 'ioredis';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Language } from '../../generated/errors.js';
import { routes, type Handlers, type RouteDef } from '../../generated/routes.js';
import type { Caller } from '../accounts/accounts.js';
import type { Context } from '../context.js';
import { multipartLimits } from '../compat/form.js';
import { newId } from '../ids.js';
import { ApiError } from '../errors.js';
import { ApiRequest } from './api-request.js';
import { registerOps } from './ops.js';
import { registerDocs } from '../../docs-site/serve.js';
import { registerConsole } from '../console/pages.js';
import { Authenticator, refuseKeyInQuery } from './auth.js';
import { pickLanguage } from './language.js';
import { sendCompatError } from './compat-error.js';
import { sendEnvelopeError, toApiError } from './render-error.js';
import { createHandlers } from './handlers.js';

declare module 'fastify' {
  interface FastifyRequest {
    caller?: Caller;
    language: Language;
  }
}

export interface AppOptions {
  logger?: boolean;
  /** Extra handlers for routes outside the contract (health, metrics, docs). */
  extend?: (app: FastifyInstance) => void | Promise<void>;
}

/** The HTTP face of the service: every operation of the generated route table, bound to its handler. */
export async function buildApp(ctx: Context, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger ? { level: 'info' } : false,
    logController: new AccessLog(),
    bodyLimit: ctx.config.bodyLimitBytes,
    genReqId: () => newId('req'),
    requestIdHeader: false,
    return503OnClosing: true,
    // Fastify's JSON parser drops __proto__ and constructor.prototype keys by rejecting the body.
  });
  // Only JSON bodies are requests; Fastify's default text/plain parser would hand a string to the
  // handlers, which then report invalid input instead of the wrong content type (40004).
  app.removeContentTypeParser('text/plain');
  app.decorateRequest('caller', undefined);
  app.decorateRequest('language', 'en');
  const authenticator = new Authenticator(ctx);

  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
    request.language = pickLanguage(request.headers['accept-language'], null);
  });

  // Shared across API processes through Redis when configured; per process otherwise.
  const redis = ctx.config.redisUrl ? new Redis(ctx.config.redisUrl, { connectTimeout: 1000, maxRetriesPerRequest: 1, lazyConnect: false }) : undefined;
  if (redis) app.addHook('onClose', async () => void (await redis.quit()));
  await app.register(rateLimit, {
    global: true,
    ...(redis ? { redis, nameSpace: 'mediaforge-rate-limit-' } : {}),
    max: ctx.config.rateLimitPerMinute,
    timeWindow: 60_000,
    keyGenerator: (request) => {
      const auth = request.headers.authorization;
      return typeof auth === 'string' ? createHash('sha256').update(auth).digest('base64url') : request.ip;
    },
    errorResponseBuilder: (_request, context) => new ApiError('rate_limited', { retryAfter: Math.ceil(context.ttl / 1000) }),
  });

  app.setErrorHandler((error, request, reply) => {
    const apiError = toApiError(error);
    if (apiError.errorName === 'internal_error') request.log.error({ err: error }, 'unhandled error');
    return isCompat(request) ? sendCompatError(request, reply, apiError, request.language) : sendEnvelopeError(request, reply, apiError, request.language);
  });
  app.setNotFoundHandler((request, reply) => {
    const error = new ApiError('route_not_found');
    return isCompat(request) ? sendCompatError(request, reply, error, request.language) : sendEnvelopeError(request, reply, error, request.language);
  });

  const handlers = createHandlers();
  const scoped = new Set(['createVideo', 'uploadFile']);
  for (const route of routes) if (!scoped.has(route.operationId)) bindRoute(app, ctx, authenticator, route, handlers);
  // PUT /uploads/{fileId} takes the raw bytes of any declared type as a stream (the signed ticket
  // caps their size, not the JSON body limit); only this scope has the catch-all parser.
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    bindRoute(scope, ctx, authenticator, routes.find((r) => r.operationId === 'uploadFile')!, handlers);
  });
  // POST /v1/videos also reads multipart/form-data (the openai SDK's encoding): the parser lives in
  // its own scope, so every other route still answers a multipart body with 40004.
  await app.register(async (scope) => {
    await scope.register(multipart, { limits: multipartLimits(ctx.config.bodyLimitBytes), throwFileSizeLimit: true });
    bindRoute(scope, ctx, authenticator, routes.find((r) => r.operationId === 'createVideo')!, handlers);
  });
  // Model ids contain slashes: GET /models/{model} also answers the unencoded form.
  const getModel = routes.find((r) => r.operationId === 'getModel')!;
  bindRoute(app, ctx, authenticator, { ...getModel, fastifyPath: getModel.fastifyPath.replace(':model', '*') }, handlers);
  registerOps(app, ctx);
  await registerDocs(app); // /docs, /openapi.json, /openapi.yaml (docs-site/serve.ts)
  await registerConsole(app, ctx); // /playground, /console and their session APIs (runtime/console/)
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
    const line = { method: request.method, path: request.url.split('?', 1)[0], status: reply.statusCode, ms: Math.round(reply.elapsedTime) };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request');
  }
}

function isCompat(request: FastifyRequest): boolean {
  return request.url.startsWith('/v1/') || request.url === '/v1';
}

function bindRoute(app: FastifyInstance, ctx: Context, authenticator: Authenticator, route: RouteDef, handlers: Handlers<ApiRequest>) {
  const handler = handlers[route.operationId] as (request: ApiRequest) => ReturnType<Handlers<ApiRequest>[typeof route.operationId]>;
  app.route({
    method: route.method,
    url: route.fastifyPath,
    // After the rate limiter (onRequest) and before the body is read: a key in the URL or a
    // missing key is answered first, and failed attempts still count against the limit.
    preParsing: async (request: FastifyRequest, _reply: FastifyReply, payload) => {
      refuseKeyInQuery(request);
      if (route.auth) {
        request.caller = await authenticator.authenticate(request);
        request.language = pickLanguage(request.headers['accept-language'], request.caller.language);
      }
      return payload;
    },
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      const result = await handler(new ApiRequest(ctx, request, reply, request.caller, request.language));
      if (reply.sent) return reply;
      for (const [name, value] of Object.entries(result.headers ?? {})) reply.header(name, value);
      reply.status(result.status);
      if ('raw' in result) return reply.send(result.raw);
      if (!route.envelope) return reply.send(result.data);
      return reply.send({ code: 200, msg: 'success', data: result.data, request_id: request.id });
    },
  });
}
