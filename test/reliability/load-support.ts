import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { rssMb } from '../../support/process-memory.js';

/**
 * Pieces of the long load test (load.long.test.ts): a webhook receiver that goes down and answers
 * 503 on a schedule, an open-loop request pacer, and an RSS sampler.
 */

export type ReceiverMode = 'up' | 'down' | '503';

/**
 * The fault schedule of the receiver, per minute of the run: refusing connections (server closed)
 * from second 10 to 25, answering 503 from second 40 to 50, up otherwise.
 */
export function receiverModeAt(elapsedMs: number): ReceiverMode {
  const second = (elapsedMs / 1000) % 60;
  if (second >= 10 && second < 25) return 'down';
  if (second >= 40 && second < 50) return '503';
  return 'up';
}

export interface FlakyReceiver {
  url: string;
  /** Delivery ids answered 200, with how often each was received. */
  delivered: Map<string, number>;
  answered503: number;
  downWindows: number;
  windows503: number;
  setMode(mode: ReceiverMode): Promise<void>;
  close(): Promise<void>;
}

export async function startFlakyReceiver(): Promise<FlakyReceiver> {
  let mode: ReceiverMode = 'up';
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (mode === '503') {
        receiver.answered503++;
        res.writeHead(503).end('busy');
        return;
      }
      const id = String(JSON.parse(Buffer.concat(chunks).toString('utf8')).request_id);
      receiver.delivered.set(id, (receiver.delivered.get(id) ?? 0) + 1);
      res.writeHead(200).end('ok');
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const receiver: FlakyReceiver = {
    url: `http://127.0.0.1:${port}/hook`,
    delivered: new Map(),
    answered503: 0,
    downWindows: 0,
    windows503: 0,
    async setMode(next) {
      if (next === mode) return;
      if (next === 'down') {
        receiver.downWindows++;
        // Closed: new connections are refused; open ones are cut.
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          for (const s of sockets) s.destroy();
        });
      } else if (mode === 'down') {
        await new Promise<void>((resolve, reject) => server.listen(port, '127.0.0.1', resolve).once('error', reject));
      }
      if (next === '503') receiver.windows503++;
      mode = next;
    },
    async close() {
      for (const s of sockets) s.destroy();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return receiver;
}

/**
 * Starts `send()` at `rate` per second (open loop: the schedule does not wait for answers) for
 * `durationMs`, with at most `maxInFlight` outstanding; a start that would pass the cap is skipped
 * and counted, so a slow service shows up as skipped starts rather than a burst later.
 */
export async function paced(
  rate: number,
  durationMs: number,
  maxInFlight: number,
  send: () => Promise<void>,
  onTick?: (elapsedMs: number) => Promise<void> | void,
) {
  const started = Date.now();
  let launched = 0;
  let skipped = 0;
  const inFlight = new Set<Promise<void>>();
  for (;;) {
    const elapsed = Date.now() - started;
    if (elapsed >= durationMs) break;
    await onTick?.(elapsed);
    const due = Math.floor((elapsed / 1000) * rate);
    while (launched < due) {
      launched++;
      if (inFlight.size >= maxInFlight) {
        skipped++;
        continue;
      }
      const p = send().finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await Promise.all(inFlight);
  return { launched, skipped, seconds: (Date.now() - started) / 1000 };
}

export interface RssSampler {
  samples: { atMs: number; mb: number }[];
  stop(): void;
}

/** VmRSS of `pid` from /proc/<pid>/status every `everyMs`. */
export function sampleRss(pid: number, everyMs: number): RssSampler {
  const started = Date.now();
  const samples: { atMs: number; mb: number }[] = [];
  const take = () => {
    const mb = rssMb(pid);
    if (mb !== undefined) samples.push({ atMs: Date.now() - started, mb });
  };
  take();
  const timer = setInterval(take, everyMs);
  return { samples, stop: () => clearInterval(timer) };
}

export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
