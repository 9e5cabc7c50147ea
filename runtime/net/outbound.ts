import http from 'node:http';
import https from 'node:https';
import { checkUrlShape, type OutboundPolicy } from './address-policy.js';
import type { OutboundAgents } from './kept-agents.js';

/** The guarded agents and lookup (runtime/net/guard.ts): every outbound connection checks its address at connect time. */
export { BlockedDestinationError, guardedAgent, guardedLookup, systemResolver, type Resolver } from './guard.js';
import { BlockedDestinationError, guardedAgent } from './guard.js';

export interface PostOptions {
  policy: OutboundPolicy;
  /** Total time for connect, send and answer. */
  timeoutMs: number;
  /** The most of the answer's body that is read (64 KiB). */
  maxResponseBytes?: number;
  /**
   * Keep-alive agents made with the same policy (the service's, Context.outbound): the request
   * reuses an idle connection to its destination. Without them it connects anew and closes after.
   */
  agents?: OutboundAgents;
}

export interface PostResult {
  /** The HTTP status, when one arrived. */
  status: number | null;
  /** Why the attempt failed without a status (or a short excerpt of a non-2xx answer). */
  error: string | null;
  /** The first bytes of the answer (capped). */
  responseExcerpt: string;
}

export const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * POSTs `body` once, on a kept connection to the destination when `options.agents` has one idle,
 * else on a new one checked at connect time. Never follows redirects (the 3xx is returned as is),
 * never throws: a refused destination, a connection error or the timeout come back as `error`. A
 * connection is only kept after an answer read to its end.
 */
export function postOnce(
  url: string,
  body: string | Buffer,
  headers: Record<string, string>,
  options: PostOptions,
): Promise<PostResult> {
  const shape = checkUrlShape(url, options.policy);
  if (typeof shape === 'string')
    return Promise.resolve({ status: null, error: `invalid URL (${shape})`, responseExcerpt: '' });
  const secure = shape.protocol === 'https:';
  const kept = options.agents;
  const agent = kept ? (secure ? kept.https : kept.http) : guardedAgent(secure, options.policy);
  const cap = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  const payload = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return new Promise<PostResult>((resolve) => {
    let status: number | null = null;
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    /** `complete`: the answer was read to its end, so its connection may serve the next delivery. */
    const finish = (error: string | null, complete = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!complete || !kept) request.destroy();
      if (!kept) agent.destroy();
      resolve({
        status,
        error: status === null ? error : null,
        responseExcerpt: Buffer.concat(chunks).toString('utf8'),
      });
    };
    const request = (secure ? https : http).request({
      protocol: shape.protocol,
      hostname: shape.hostname.replace(/^\[|\]$/g, ''),
      port: shape.port || (secure ? 443 : 80),
      path: `${shape.pathname}${shape.search}`,
      method: 'POST',
      agent,
      headers: { ...headers, 'Content-Length': String(payload.length) },
    });
    const timer = setTimeout(() => finish(`timeout after ${options.timeoutMs} ms`), options.timeoutMs);
    request.on('response', (response) => {
      status = response.statusCode ?? null;
      response.on('data', (chunk: Buffer) => {
        if (received < cap) chunks.push(chunk.subarray(0, cap - received));
        received += chunk.length;
        if (received >= cap) finish(null);
      });
      response.on('end', () => finish(null, true));
      response.on('error', () => finish(null));
    });
    request.on('error', (error: NodeJS.ErrnoException) =>
      finish(error instanceof BlockedDestinationError ? error.message : `${error.code ?? 'error'}: ${error.message}`),
    );
    request.end(payload);
  });
}
