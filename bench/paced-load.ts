/**
 * An open-loop load at a fixed rate: request i is due at start + i / rate, evenly spaced, whatever
 * the answers before it did, over at most `connections` keep-alive connections (a request due while
 * every connection is busy waits for one, and that wait counts). Each latency runs from the
 * request's due time to its whole answer, so a stall of the server is paid by every request due
 * during it, as a client at that rate would pay it.
 *
 * Why not autocannon's overallRate: it lets each connection send back to back until it has made its
 * share of the second, then idle until the next second (full load for part of every second, not
 * half the load), and it records each answer with HdrHistogram's expected-interval correction at
 * ceil(1 / per-connection rate) = 1 ms, adding a synthetic sample for every millisecond of every
 * answer: its percentiles are weighted by latency, and one slow answer of 250 ms adds 249 samples.
 */
import { Agent } from 'node:http';
import { send } from './http-client.js';
import { percentile, sleep, type RequestShape } from './support.js';

export interface PacedResult {
  /** 2xx answers per second of the run (due window), as planned when the server keeps up. */
  rps: number;
  ok: number;
  non2xx: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** p99 of how late this process handed a request over (its own lag): when large, the client measured itself. */
  lagP99Ms: number;
  /** How long after the last request's due time the last answer came: large when the server (or this client) fell behind the rate. */
  drainMs: number;
  seconds: number;
}

export async function pacedLoad(
  url: string,
  shape: RequestShape,
  options: { rate: number; seconds: number; connections: number },
): Promise<PacedResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const base = new URL(url);
  const latencies: number[] = [];
  const lags: number[] = [];
  let non2xx = 0;
  let errors = 0;
  const pending: Promise<void>[] = [];
  const interval = 1000 / options.rate;
  const total = Math.max(1, Math.round(options.rate * options.seconds));
  const start = performance.now();
  let drainMs = NaN;
  try {
    for (let i = 0; i < total; ) {
      const now = performance.now();
      for (; i < total && start + i * interval <= now; i++) {
        const due = start + i * interval;
        lags.push(now - due);
        pending.push(
          send(agent, base, shape).then(
            (status) => {
              if (status >= 200 && status < 300) latencies.push(performance.now() - due);
              else non2xx++;
            },
            () => {
              errors++;
            },
          ),
        );
      }
      if (i < total) await sleep(Math.max(0, Math.min(1, start + i * interval - performance.now())));
    }
    await Promise.all(pending);
    drainMs = performance.now() - (start + (total - 1) * interval);
  } finally {
    agent.destroy();
  }
  return {
    rps: latencies.length / options.seconds,
    ok: latencies.length,
    non2xx,
    errors,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: percentile(latencies, 100),
    lagP99Ms: percentile(lags, 99),
    drainMs,
    seconds: options.seconds,
  };
}
