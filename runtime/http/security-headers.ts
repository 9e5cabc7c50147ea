import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet, { type HelmetOptions } from 'helmet';
import type { Config } from '../config.js';

/**
 * The security headers of every answer, errors and 404s included, as helmet computes them. They
 * depend on the configuration only, so they are computed once: @fastify/helmet built a new helmet
 * middleware (parsing the CSP directives) on every request, about 3 % of a quote's CPU time.
 */
export function securityHeaders(config: Pick<Config, 'publicUrl'>): Readonly<Record<string, string>> {
  const options: HelmetOptions = {
    // JSON and media carry no active content: nothing may load from them and nothing may frame them.
    // Pages set their own policy over this one (runtime/console/pages.ts, docs-site/serve.ts).
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    // Media links are handed to clients, whose own pages may show them (runtime/http/routes/media.ts says cross-origin).
    crossOriginResourcePolicy: { policy: 'same-origin' },
    // Meaningful only where clients reach the service over TLS.
    hsts: config.publicUrl.startsWith('https:') ? { maxAge: 31_536_000 } : false,
  };
  const headers: Record<string, string> = {};
  // helmet's middleware only sets and removes response headers, synchronously: record them.
  const recorder = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers[name] = String(value);
    },
    removeHeader(name: string) {
      delete headers[name];
    },
  };
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error;
  });
  return Object.freeze(headers);
}
