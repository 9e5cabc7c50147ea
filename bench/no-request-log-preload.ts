/**
 * Diagnosis only (never in the figures): `serve` builds Fastify with logger level info, which logs
 * two lines per request ("incoming request", "request completed") to stdout. This preload starts
 * the same server with the logger at warn, to measure what per-request logging costs. (Fastify
 * requires pino through require(), so replacing pino's cached export reaches it.)
 *   node --import tsx --import ./bench/no-request-log-preload.ts bin/mediaforge.js serve ...
 */
import { createRequire } from 'node:module';

// pino as Fastify resolves it.
const require = createRequire(createRequire(import.meta.url).resolve('fastify'));
const path = require.resolve('pino');
const pino = require('pino') as ((...args: unknown[]) => unknown) & Record<string, unknown>;
const atWarn = (options?: unknown, ...rest: unknown[]) =>
  pino(
    typeof options === 'object' && options !== null && !('write' in options) ? { ...options, level: 'warn' } : options,
    ...rest,
  );
const wrapped = Object.assign(atWarn, pino);
wrapped.default = wrapped;
wrapped.pino = wrapped;
require.cache[path]!.exports = wrapped;
