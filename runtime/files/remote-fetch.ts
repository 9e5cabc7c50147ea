import http from 'node:http';
import https from 'node:https';
import { checkUrlShape, type OutboundPolicy } from '../net/address-policy.js';
import { BlockedDestinationError, guardedAgent } from '../webhooks/outbound.js';

export interface FetchOptions {
  policy: OutboundPolicy;
  timeoutMs: number;
  /** The most bytes read; a larger answer is refused (by Content-Length first, else while streaming). */
  maxBytes: number;
}

export type FetchResult =
  | { ok: true; bytes: Buffer; contentType: string | undefined }
  | { ok: false; reason: 'url' | 'blocked' | 'status' | 'redirect' | 'too_large' | 'timeout' | 'network'; detail: string };

/**
 * GETs a file once through the SSRF-guarded agent of the webhooks (every connection checks the
 * address it is about to reach, so DNS rebinding and literal private addresses are refused).
 * URL rules as for callbacks: https on 443 (the test-only allow switches relax them). Redirects are
 * never followed; the answer is capped at `maxBytes`; the whole exchange at `timeoutMs`.
 */
export function fetchCapped(url: string, options: FetchOptions): Promise<FetchResult> {
  const shape = checkUrlShape(url, options.policy);
  if (typeof shape === 'string') return Promise.resolve({ ok: false, reason: 'url', detail: `invalid URL (${shape})` });
  const secure = shape.protocol === 'https:';
  const agent = guardedAgent(secure, options.policy);
  return new Promise<FetchResult>((resolve) => {
    let settled = false;
    const finish = (result: FetchResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      agent.destroy();
      resolve(result);
    };
    const request = (secure ? https : http).request({
      protocol: shape.protocol,
      hostname: shape.hostname.replace(/^\[|\]$/g, ''),
      port: shape.port || (secure ? 443 : 80),
      path: `${shape.pathname}${shape.search}`,
      method: 'GET',
      agent,
      headers: { 'User-Agent': 'Service-Fetch/1', Accept: '*/*' },
    });
    const timer = setTimeout(() => finish({ ok: false, reason: 'timeout', detail: `timeout after ${options.timeoutMs} ms` }), options.timeoutMs);
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      if (status >= 300 && status < 400) return finish({ ok: false, reason: 'redirect', detail: `redirect (${status}) not followed` });
      if (status < 200 || status >= 300) return finish({ ok: false, reason: 'status', detail: `status ${status}` });
      const declared = Number(response.headers['content-length']);
      if (Number.isFinite(declared) && declared > options.maxBytes) return finish({ ok: false, reason: 'too_large', detail: `${declared} bytes; the limit is ${options.maxBytes}` });
      const chunks: Buffer[] = [];
      let received = 0;
      response.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > options.maxBytes) return finish({ ok: false, reason: 'too_large', detail: `more than ${options.maxBytes} bytes` });
        chunks.push(chunk);
      });
      response.on('end', () => finish({ ok: true, bytes: Buffer.concat(chunks), contentType: response.headers['content-type'] }));
      response.on('error', (error) => finish({ ok: false, reason: 'network', detail: error.message }));
    });
    request.on('error', (error: NodeJS.ErrnoException) =>
      finish(error instanceof BlockedDestinationError ? { ok: false, reason: 'blocked', detail: error.message } : { ok: false, reason: 'network', detail: `${error.code ?? 'error'}: ${error.message}` }),
    );
    request.end();
  });
}
