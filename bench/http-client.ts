/**
 * One request over a keep-alive node:http Agent, for the benchmarks that pace or bound their own
 * requests (autocannon only runs closed loops): the status once the answer has been read whole.
 */
import { type Agent, request } from 'node:http';
import type { RequestShape } from './support.js';

let sent = 0;
const runId = `${process.pid.toString(36)}-${Date.now().toString(36)}`;

/** The headers of one request of `shape`: its content type, a fresh Idempotency-Key, the next of its keys. */
export function headersOf(shape: RequestShape): Record<string, string> {
  sent++;
  return {
    ...(shape.body ? { 'content-type': 'application/json' } : {}),
    ...shape.headers,
    ...(shape.keysPerConnection
      ? { authorization: `Bearer ${shape.keysPerConnection[sent % shape.keysPerConnection.length]}` }
      : {}),
    ...(shape.uniqueIdempotencyKey ? { 'idempotency-key': `bench-${runId}-h${sent}` } : {}),
  };
}

export function send(agent: Agent, base: URL, shape: RequestShape, timeoutMs = 30_000): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = shape.body === undefined ? undefined : Buffer.from(shape.body);
    const req = request(
      {
        agent,
        host: base.hostname,
        port: base.port,
        method: shape.method,
        path: shape.path,
        timeout: timeoutMs,
        headers: { ...headersOf(shape), ...(body ? { 'content-length': String(body.length) } : {}) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}
