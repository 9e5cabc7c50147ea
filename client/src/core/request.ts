/**
 * The one request path of the client: a typed openapi-fetch client over the generated `paths`,
 * plus the envelope unwrapping, the error classes and the retry policy.
 *
 * Retry policy (automatic, with exponential backoff and jitter, honouring Retry-After):
 * - 429 is retried for every call: the rate limiter answers before the request is processed.
 * - 5xx (not 501), 40904 (idempotency in progress), timeouts and network errors are retried only
 *   for calls that are safe to repeat: reads, quote, purge (idempotent by taskId), and createTask /
 *   retry, which always carry an Idempotency-Key (the client generates one when the caller gives
 *   none, and the same key is sent on every attempt, so a lost answer never creates a second task).
 */
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from '../sdk-types.js';
import {
  ApiError,
  ConnectionError,
  errorFromResponse,
  MediaforgeError,
  parseRetryAfterMs,
  TimeoutError,
} from './errors.js';

export type FetchLike = (input: Request | string | URL, init?: RequestInit) => Promise<Response>;

export interface ClientOptions {
  /** An API key, `sk-service-...`; sent as `Authorization: Bearer <key>`, never in the URL. */
  apiKey: string;
  /** The service address: the host root (`https://host`) or the API root (`https://host/api/v1`). */
  baseUrl: string;
  /** Retries after the first attempt (default 2). 0 turns automatic retries off. */
  maxRetries?: number | undefined;
  /** Per-attempt time limit in ms (default 60 000; a createTask with `wait` gets wait + 30 s at least). */
  timeoutMs?: number | undefined;
  /** A fetch implementation (default globalThis.fetch). */
  fetch?: FetchLike | undefined;
  /** Accept-Language for error messages (`de`, `ja`, ...); default: the account's setting. */
  language?: string | undefined;
  /** Longest Retry-After the client waits for by itself (default 60 s); longer ones are thrown. */
  maxRetryAfterMs?: number | undefined;
}

export interface RequestOptions {
  signal?: AbortSignal | undefined;
  /** Per-attempt time limit in ms for this call. */
  timeoutMs?: number | undefined;
  /** Overrides the client's maxRetries for this call. */
  maxRetries?: number | undefined;
}

/** The unwrapped answer of one call: the envelope's `data`, its request id and the HTTP answer. */
export interface ApiResult<T> {
  data: T;
  requestId: string;
  response: Response;
}

/** How a call may be repeated: `safe` (any retryable failure) or `unsafe` (429 only). */
export type RetryClass = 'safe' | 'unsafe';

type RawResult = { data?: unknown; error?: unknown; response: Response };

const BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 8_000;

export class Core {
  readonly api: Client<paths>;
  readonly baseUrl: string;
  readonly maxRetries: number;
  readonly timeoutMs: number;
  readonly maxRetryAfterMs: number;
  readonly fetchImpl: FetchLike;

  constructor(options: ClientOptions) {
    if (!options || typeof options.apiKey !== 'string' || options.apiKey.length === 0)
      throw new MediaforgeError('new Mediaforge({ apiKey, baseUrl }): apiKey is required');
    if (typeof options.baseUrl !== 'string' || !/^https?:\/\//.test(options.baseUrl))
      throw new MediaforgeError('new Mediaforge({ apiKey, baseUrl }): baseUrl must be an http(s) URL');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
    this.maxRetries = options.maxRetries ?? 2;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
    const userFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.fetchImpl = userFetch;
    this.api = createClient<paths>({
      baseUrl: this.baseUrl,
      fetch: (request: Request) => userFetch(request),
      headers: {
        Authorization: `Bearer ${options.apiKey}`,
        Accept: 'application/json',
        ...(options.language ? { 'Accept-Language': options.language } : {}),
      },
    });
  }

  /**
   * Runs `send` until it succeeds, fails for good, or runs out of retries. `send` gets the signal
   * of the attempt (the caller's signal plus the attempt's time limit) and makes one HTTP call.
   */
  async call<T>(
    send: (signal: AbortSignal) => Promise<RawResult>,
    retry: RetryClass,
    options: RequestOptions = {},
  ): Promise<ApiResult<T>> {
    const maxRetries = options.maxRetries ?? this.maxRetries;
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    for (let attempt = 0; ; attempt++) {
      options.signal?.throwIfAborted();
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
      let failure: MediaforgeError;
      let delayMs: number | null = null;
      try {
        const result = await send(signal);
        if (result.response.ok) return unwrap<T>(result);
        const error = errorFromResponse(result.response.status, result.error, result.response.headers);
        failure = error;
        if (isRetryable(error, retry)) delayMs = parseRetryAfterMs(result.response.headers.get('retry-after'));
        else throw error;
        if (delayMs !== null && delayMs > this.maxRetryAfterMs) throw error;
      } catch (error) {
        if (error instanceof ApiError) throw error;
        if (options.signal?.aborted) throw options.signal.reason ?? error;
        failure = timeout.aborted
          ? new TimeoutError(`no answer within ${timeoutMs} ms`, { cause: error })
          : new ConnectionError(`connection failed: ${(error as Error)?.message ?? error}`, { cause: error });
        if (retry !== 'safe') throw failure;
      }
      if (attempt >= maxRetries) throw failure;
      await sleep(delayMs ?? backoffMs(attempt), options.signal);
    }
  }
}

function isRetryable(error: ApiError, retry: RetryClass): boolean {
  if (error.status === 429) return true;
  if (retry !== 'safe') return false;
  if (error.code === 40904) return true;
  return error.status >= 500 && error.status !== 501;
}

function unwrap<T>(result: RawResult): ApiResult<T> {
  const body = result.data as { data?: unknown; request_id?: unknown } | undefined;
  const requestId =
    typeof body?.request_id === 'string' ? body.request_id : (result.response.headers.get('x-request-id') ?? '');
  return {
    data: (body && typeof body === 'object' && 'data' in body ? body.data : body) as T,
    requestId,
    response: result.response,
  };
}

/** 0.5 s, 1 s, 2 s, ... up to 8 s, with +-25 % jitter. */
export function backoffMs(attempt: number): number {
  const base = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** attempt);
  return Math.round(base * (0.75 + Math.random() * 0.5));
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A fresh Idempotency-Key. */
export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}
