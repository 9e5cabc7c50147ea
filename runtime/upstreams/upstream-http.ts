import http from 'node:http';
import https from 'node:https';
import type { OutboundPolicy } from '../net/address-policy.js';
import { FetchFailure, openCapped } from '../files/remote-fetch.js';
import {
  ResultTooLargeError,
  retryAfterMs,
  statusClass,
  submitStatusClass,
  UpstreamError,
} from '../deployments/upstream-error.js';

/** The most bytes of a JSON answer read (a job's status, an error): anything larger is not the protocol. */
const JSON_MAX_BYTES = 1024 * 1024;
/** Redirects followed on the upstream's own origin before a result link gives up. */
const MAX_REDIRECTS = 3;

export interface UpstreamAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body's chunks; reading it to the end, or `close`, ends the exchange. */
  body: AsyncIterable<Buffer>;
  close(): void;
}

export interface CallOptions {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  headers?: Record<string, string>;
  body?: Buffer;
  /** Time until the answer's status and headers (connect and send included). */
  timeoutMs: number;
  /** Longest silence while the body streams (downloads); the answer's timeout by default. */
  idleMs?: number;
  /** Longest time for the whole exchange, body included (downloads): past it the body ends with an error. */
  totalMs?: number;
  /** Ends the exchange where it is (the worker's item aborted: shutdown, lease lost, the task's deadline). */
  signal?: AbortSignal;
  /** A connection of its own, closed after the answer: a submit must never meet a keep-alive socket the server just dropped (that reset would look like an ambiguous send). */
  fresh?: boolean;
}

/**
 * HTTP to an upstream the operator configured: its `baseUrl` is trusted (it may be a private or
 * loopback address: relays often run beside the service), so these requests do not go through the
 * outbound guard. What a caller supplies never comes here (runtime/net/outbound.ts guards that).
 *
 * Failures are classified by how far the request got: one that failed before its body was
 * written is `unreachable` (nothing can exist upstream); after it, `ambiguous`.
 */
export class UpstreamHttp {
  private readonly keepAlive: { http: http.Agent; https: https.Agent };

  constructor(
    readonly baseUrl: string,
    private readonly defaultHeaders: Record<string, string>,
  ) {
    this.keepAlive = {
      http: new http.Agent({ keepAlive: true, maxSockets: 32 }),
      https: new https.Agent({ keepAlive: true, maxSockets: 32 }),
    };
  }

  /** The URL of a path under the base (`/videos` under `https://relay/v1` is `https://relay/v1/videos`). */
  url(path: string): URL {
    return new URL(this.baseUrl.replace(/\/+$/, '') + path);
  }

  /** Whether a link the upstream handed back is on its own origin (trusted, sent the key) or elsewhere (guarded, sent nothing). */
  ownOrigin(link: string): boolean {
    try {
      return new URL(link).origin === new URL(this.baseUrl).origin;
    } catch {
      return false;
    }
  }

  close(): void {
    this.keepAlive.http.destroy();
    this.keepAlive.https.destroy();
  }

  /** One request; resolves once status and headers are in (the body is read by the caller), else throws UpstreamError. */
  open(target: URL, options: CallOptions): Promise<UpstreamAnswer> {
    const secure = target.protocol === 'https:';
    const agent = options.fresh ? false : secure ? this.keepAlive.https : this.keepAlive.http;
    return new Promise<UpstreamAnswer>((resolve, reject) => {
      let answered = false;
      let written = false;
      let failure: Error | undefined;
      const headers = {
        ...this.defaultHeaders,
        ...options.headers,
        ...(options.body ? { 'Content-Length': String(options.body.length) } : {}),
      };
      const request = (secure ? https : http).request(target, { method: options.method, headers, agent });
      let timer = setTimeout(
        () => request.destroy(new Error(`no answer within ${options.timeoutMs} ms`)),
        options.timeoutMs,
      );
      // The whole exchange's bounds: the total time and the caller's signal cut it wherever it is.
      const total =
        options.totalMs === undefined
          ? undefined
          : setTimeout(
              () => request.destroy(new Error(`not complete within ${options.totalMs} ms`)),
              Math.max(0, options.totalMs),
            );
      const aborted = () => request.destroy(new Error(`aborted: ${String(options.signal?.reason)}`));
      const unbound = () => {
        clearTimeout(total);
        options.signal?.removeEventListener('abort', aborted);
      };
      if (options.signal?.aborted) queueMicrotask(aborted);
      else options.signal?.addEventListener('abort', aborted, { once: true });
      request.on('close', unbound);
      request.on('finish', () => (written = true));
      request.on('error', (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        if (answered) {
          failure ??= error;
          return;
        }
        answered = true;
        const what = `${options.method} ${target.pathname}: ${error.code ?? error.message}`;
        // Refused, unresolvable, or cut before the whole request was written: the upstream cannot have acted on it.
        const nothingSent =
          !written ||
          ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH'].includes(error.code ?? '');
        reject(new UpstreamError(nothingSent ? 'unreachable' : 'ambiguous', what));
      });
      request.on('response', (response) => {
        answered = true;
        clearTimeout(timer);
        const idle = options.idleMs ?? options.timeoutMs;
        const arm = () => {
          clearTimeout(timer);
          timer = setTimeout(() => response.destroy(new Error(`no data for ${idle} ms`)), idle);
        };
        response.on('error', (error) => (failure ??= error));
        const close = () => {
          clearTimeout(timer);
          unbound();
          response.destroy();
          request.destroy();
        };
        async function* body(): AsyncGenerator<Buffer> {
          arm();
          try {
            for await (const chunk of response as AsyncIterable<Buffer>) {
              arm();
              yield chunk;
            }
            if (failure) throw failure;
            if (!response.complete) throw new Error('the connection closed before the end of the answer');
          } catch (error) {
            throw new UpstreamError(
              'ambiguous',
              `${options.method} ${target.pathname}: ${(failure ?? (error as Error)).message}`,
            );
          } finally {
            close();
          }
        }
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: body(), close });
      });
      request.end(options.body);
    });
  }

  /** A request whose answer is JSON (at most 1 MiB); a non-JSON answer gives `json` undefined. */
  async json(
    target: URL,
    options: CallOptions,
  ): Promise<{ status: number; headers: http.IncomingHttpHeaders; json: unknown }> {
    const answer = await this.open(target, options);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of answer.body) {
      size += chunk.length;
      if (size > JSON_MAX_BYTES) {
        answer.close();
        throw new UpstreamError(
          'protocol',
          `${options.method} ${target.pathname}: an answer of more than ${JSON_MAX_BYTES} bytes`,
        );
      }
      chunks.push(chunk);
    }
    let json: unknown;
    try {
      json = size ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    } catch {
      json = undefined;
    }
    return { status: answer.status, headers: answer.headers, json };
  }
}

/** How much of the upstream's reason the error's message quotes (the whole reason stays in `details`). */
const REASON_IN_MESSAGE_CHARS = 200;

/**
 * The first `max` characters cut back to the last whitespace: a token (a key the upstream echoed)
 * is quoted whole or not at all, so redaction, which matches whole keys, never meets half of one.
 */
function wordsWithin(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = text.slice(0, max + 1);
  const cut = head.search(/\s\S*$/);
  return cut > 0 ? head.slice(0, cut).trimEnd() : '';
}

/**
 * The error for an answer that is not a success: its class by status, the Retry-After, the upstream's reason.
 * Given `submitAt` (the URL a submit was sent to), a 404 or 405 is the `configuration` class: the
 * deployment's baseUrl or path is wrong, and the error names the URL's path (never its query).
 */
export function answerError(
  what: string,
  status: number,
  headers: http.IncomingHttpHeaders,
  reason: string | undefined,
  now: number,
  submitAt?: URL,
): UpstreamError {
  const retry = retryAfterMs(headers['retry-after'] as string | undefined, now);
  const head = reason ? wordsWithin(reason, REASON_IN_MESSAGE_CHARS) : '';
  const failure = submitAt ? submitStatusClass(status) : statusClass(status);
  const configuration = failure === 'configuration' && submitAt !== undefined;
  const message = configuration
    ? `${what}: status ${status} at ${submitAt.pathname}: the deployment's baseUrl or path is wrong`
    : `${what}: status ${status}${head ? ` (${head})` : ''}`;
  return new UpstreamError(failure, message, {
    status,
    ...(retry !== undefined ? { retryAfterMs: retry } : {}),
    ...(reason ? { reason } : {}),
    ...(configuration ? { path: submitAt.pathname } : {}),
  });
}

export interface ResultLinkOptions {
  /** For links on another origin than the upstream's: the outbound guard, as for anything not the operator's. */
  policy: OutboundPolicy;
  maxBytes: number;
  /** Longest download of one result, from its first request to its last byte (redirects included). */
  timeoutMs: number;
  idleMs: number;
  /** Ends the download where it is: the job's signal (the worker's item aborted, or the task's deadline). */
  signal?: AbortSignal;
}

/**
 * The bytes behind a result link, as a stream opened when first read (so the worker writes them to
 * the blob store as they arrive, never whole in memory). A link on the upstream's own origin is
 * trusted and sent the upstream's headers; any other goes through the outbound guard with none.
 * Either way the whole download is bounded by `timeoutMs` and ends when `signal` aborts; a result
 * past `maxBytes` throws ResultTooLargeError (final: asking again fetches the same file).
 */
export function resultStream(
  client: UpstreamHttp,
  link: string,
  options: ResultLinkOptions,
  headers: Record<string, string> = {},
): AsyncIterable<Buffer> {
  return {
    async *[Symbol.asyncIterator]() {
      const endsAt = Date.now() + options.timeoutMs;
      let target = link;
      // A content route may answer with a redirect to the file (mediaforge's /v1 does, to its signed link).
      for (let hop = 0; client.ownOrigin(target); hop++) {
        const answer = await client.open(new URL(target), {
          method: 'GET',
          headers,
          timeoutMs: Math.min(options.timeoutMs, 60_000),
          idleMs: options.idleMs,
          totalMs: endsAt - Date.now(),
          ...(options.signal ? { signal: options.signal } : {}),
        });
        const location = answer.headers.location;
        if (answer.status >= 300 && answer.status < 400 && typeof location === 'string' && hop < MAX_REDIRECTS) {
          answer.close();
          target = new URL(location, target).href;
          continue;
        }
        if (answer.status < 200 || answer.status >= 300) {
          answer.close();
          throw new UpstreamError(
            answer.status === 404 || answer.status === 410 ? 'lost' : statusClass(answer.status),
            `GET result: status ${answer.status}`,
            { status: answer.status },
          );
        }
        const declared = Number(answer.headers['content-length']);
        if (Number.isFinite(declared) && declared > options.maxBytes) {
          answer.close();
          throw new ResultTooLargeError(options.maxBytes, `GET result: ${declared} bytes`);
        }
        let received = 0;
        for await (const chunk of answer.body) {
          received += chunk.length;
          if (received > options.maxBytes) {
            answer.close();
            throw new ResultTooLargeError(options.maxBytes, 'GET result');
          }
          yield chunk;
        }
        return;
      }
      // Elsewhere (a CDN, a bucket): a link like any other the service did not choose, so through the guard, without the key.
      const opened = await openCapped(target, {
        policy: options.policy,
        maxBytes: options.maxBytes,
        timeoutMs: Math.max(0, endsAt - Date.now()),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      if (!opened.ok && opened.reason === 'too_large')
        throw new ResultTooLargeError(options.maxBytes, `GET result elsewhere: ${opened.detail}`);
      if (!opened.ok) {
        // A link the guard refuses (a private address, plain http, a redirect) will not become fetchable by asking again.
        const refused = opened.reason === 'blocked' || opened.reason === 'url' || opened.reason === 'redirect';
        throw new UpstreamError(
          refused ? 'rejected' : opened.reason === 'status' ? 'lost' : 'protocol',
          `GET result elsewhere: ${opened.detail}`,
        );
      }
      try {
        yield* opened.body;
      } catch (error) {
        if (error instanceof FetchFailure && error.reason === 'too_large')
          throw new ResultTooLargeError(options.maxBytes, `GET result elsewhere: ${error.detail}`);
        throw error;
      } finally {
        opened.close();
      }
    },
  };
}
