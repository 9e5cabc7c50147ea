import { randomUUID } from 'node:crypto';
/**
 * HTTP load with autocannon: a request shape (a fresh Idempotency-Key per request, one API key per
 * connection) made into autocannon's options, and its result summed up as rates and latencies.
 */
import autocannon, { type Options as CannonOptions, type Result as CannonResult } from 'autocannon';

export interface LoadResult {
  /** 2xx answers per second. */
  rps: number;
  ok: number;
  non2xx: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  seconds: number;
  statusCodes: Record<string, number>;
}

function summarize(result: CannonResult): LoadResult {
  const statusCodes = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, Number(s.count)]),
  );
  const ok = Number(result['2xx'] ?? 0);
  return {
    rps: ok / result.duration,
    ok,
    non2xx: result.non2xx,
    errors: result.errors,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    seconds: result.duration,
    statusCodes,
  };
}

export async function cannon(options: CannonOptions): Promise<LoadResult> {
  const result = await autocannon({ timeout: 30, ...options });
  return summarize(result);
}

export interface RequestShape {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** A fresh Idempotency-Key on every request. */
  uniqueIdempotencyKey?: boolean;
  /** One API key per connection, taken in turn from this list (else headers.authorization). */
  keysPerConnection?: string[];
  /** An API key per request, taken in turn from this list: more accounts than connections (else as above). */
  keysPerRequest?: string[];
}

/** autocannon options for a request shape: per-request Idempotency-Keys, per-connection or per-request API keys. */
export function cannonOptions(
  url: string,
  shape: RequestShape,
  connections: number,
  seconds: number,
  overallRate?: number,
): CannonOptions {
  const headers = { ...(shape.body ? { 'content-type': 'application/json' } : {}), ...shape.headers };
  let nextKey = 0;
  let nextRequestKey = 0;
  const { keysPerRequest, uniqueIdempotencyKey } = shape;
  const request = (connectionHeaders: Record<string, string>) => ({
    method: shape.method,
    path: shape.path,
    headers: connectionHeaders,
    body: shape.body,
    ...(uniqueIdempotencyKey || keysPerRequest
      ? {
          setupRequest: (req: { headers?: Record<string, string> }) => {
            const own = { ...req.headers };
            if (uniqueIdempotencyKey) own['idempotency-key'] = `bench-${randomUUID()}`;
            if (keysPerRequest)
              own.authorization = `Bearer ${keysPerRequest[nextRequestKey++ % keysPerRequest.length]}`;
            req.headers = own;
            return req;
          },
        }
      : {}),
  });
  return {
    url,
    connections,
    duration: seconds,
    ...(overallRate ? { overallRate } : {}),
    requests: [request(headers)],
    // Each connection gets its own request objects (autocannon shares the array otherwise).
    setupClient: (client) => {
      const own = shape.keysPerConnection
        ? { ...headers, authorization: `Bearer ${shape.keysPerConnection[nextKey++ % shape.keysPerConnection.length]}` }
        : headers;
      client.setRequests([request(own)]);
    },
  };
}
