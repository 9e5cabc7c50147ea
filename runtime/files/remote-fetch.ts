import http from 'node:http';
import https from 'node:https';
import { checkUrlShape, type OutboundPolicy } from '../net/address-policy.js';
import { BlockedDestinationError, guardedAgent } from '../net/outbound.js';

export interface FetchOptions {
  policy: OutboundPolicy;
  timeoutMs: number;
  /** The most bytes read; a larger answer is refused (by Content-Length first, else while streaming). */
  maxBytes: number;
  /** Ends the exchange where it is (reason `aborted`): the caller gave it up (a worker shutting down, a deadline). */
  signal?: AbortSignal;
}

export type FailureReason = 'url' | 'blocked' | 'status' | 'redirect' | 'too_large' | 'timeout' | 'aborted' | 'network';

/** A fetch that failed while its body streamed (too large, timed out, connection lost). */
export class FetchFailure extends Error {
  constructor(
    readonly reason: FailureReason,
    readonly detail: string,
  ) {
    super(detail);
    this.name = 'FetchFailure';
  }
}

export type OpenResult =
  | {
      ok: true;
      /** The body's chunks; throws FetchFailure when it passes maxBytes, the time runs out or the connection fails. */
      body: AsyncIterable<Buffer>;
      contentType: string | undefined;
      /** The answer's Content-Length, when it declared one (never above maxBytes: a larger one is refused). */
      declaredBytes: number | undefined;
      /** Ends the exchange (after the body was read, or to give it up). */
      close(): void;
    }
  | { ok: false; reason: FailureReason; detail: string };

/**
 * GETs a file once through the SSRF-guarded agent of the webhooks (every connection checks the
 * address it is about to reach, so DNS rebinding and literal private addresses are refused).
 * URL rules as for callbacks: https on 443 (the test-only allow switches relax them). Redirects are
 * never followed; the answer is capped at `maxBytes`; the whole exchange, body included, at
 * `timeoutMs`. Answers once the status and headers are in: the body is read as a stream, so a
 * large file is never whole in memory.
 */
export function openCapped(url: string, options: FetchOptions): Promise<OpenResult> {
  const shape = checkUrlShape(url, options.policy);
  if (typeof shape === 'string') return Promise.resolve({ ok: false, reason: 'url', detail: `invalid URL (${shape})` });
  const secure = shape.protocol === 'https:';
  const agent = guardedAgent(secure, options.policy);
  return new Promise<OpenResult>((resolve) => {
    let answered = false;
    let failure: FetchFailure | undefined;
    const close = () => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', aborted);
      request.destroy();
      agent.destroy();
    };
    /** Before the answer: resolve with the failure; after it: end the body with it. */
    const fail = (reason: FailureReason, detail: string) => {
      if (failure) return;
      failure = new FetchFailure(reason, detail);
      if (!answered) {
        answered = true;
        close();
        resolve({ ok: false, reason, detail });
      } else request.destroy(failure);
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
    const timer = setTimeout(() => fail('timeout', `timeout after ${options.timeoutMs} ms`), options.timeoutMs);
    const aborted = () => fail('aborted', `aborted: ${String(options.signal?.reason)}`);
    if (options.signal?.aborted) queueMicrotask(aborted);
    else options.signal?.addEventListener('abort', aborted, { once: true });
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      if (status >= 300 && status < 400) return fail('redirect', `redirect (${status}) not followed`);
      if (status < 200 || status >= 300) return fail('status', `status ${status}`);
      const declared = Number(response.headers['content-length']);
      if (Number.isFinite(declared) && declared > options.maxBytes)
        return fail('too_large', `${declared} bytes; the limit is ${options.maxBytes}`);
      answered = true;
      // Errors reach the body's reader through its iterator; this keeps one unread from crashing the process.
      response.on('error', () => {});
      async function* body(): AsyncGenerator<Buffer> {
        let received = 0;
        try {
          for await (const chunk of response as AsyncIterable<Buffer>) {
            received += chunk.length;
            if (received > options.maxBytes) fail('too_large', `more than ${options.maxBytes} bytes`);
            if (failure) throw failure;
            yield chunk;
          }
          // An answer cut short by a failure (timeout) may end without an error event.
          if (failure) throw failure;
          if (!response.complete) throw new FetchFailure('network', 'connection closed before the end of the answer');
        } catch (error) {
          if (failure) throw failure;
          if (error instanceof FetchFailure) throw error;
          throw new FetchFailure('network', (error as Error).message);
        } finally {
          close();
        }
      }
      resolve({
        ok: true,
        body: body(),
        contentType: response.headers['content-type'],
        declaredBytes: Number.isFinite(declared) ? declared : undefined,
        close,
      });
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (answered) return; // the body's reader hears it
      if (error instanceof BlockedDestinationError) fail('blocked', error.message);
      else fail('network', `${error.code ?? 'error'}: ${error.message}`);
    });
    request.end();
  });
}
