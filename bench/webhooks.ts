/**
 * Webhook fan-out: N tasks with a callBackUrl pointing at a loopback receiver in this process,
 * which checks every signature with the documented formula (base64 HMAC-SHA256 keyed with the
 * account's secret string, over "<taskId>.<timestamp>.<sha256_hex(raw body)>").
 *
 * Two phases, so that the rate measures the service's fan-out and not how fast the bench can
 * create tasks: an API-only process (no worker) accepts the N tasks; it stops, and a full process
 * (worker on) starts on the same database with a short simulator latency. Its worker then runs,
 * finishes and announces all N; deliveriesPerSec = (N - 1) / (time of the N-th verified delivery -
 * time of the first), counted on the receiver. webhookServiceCpuMsPerDelivery: the full process's
 * CPU between the 10 % and the 90 % verified delivery ÷ the deliveries between. Both processes carry the test-only switches
 * MEDIAFORGE_WEBHOOK_ALLOW_PRIVATE=1 and MEDIAFORGE_WEBHOOK_ALLOW_INSECURE=1 (plain http to 127.0.0.1).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { Agent, createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { send } from './http-client.js';
import {
  cpuMs,
  ownCpuMs,
  createAccounts,
  isMain,
  newServiceDir,
  round,
  sleep,
  sqliteUrl,
  startService,
  RUNNING_INPUT,
  MODEL,
  type BenchOutput,
  type RunMode,
} from './support.js';

/** The receiver side of docs/webhooks.md, written independently of the runtime. */
export function verifyCallback(
  secret: string,
  headers: IncomingHttpHeaders,
  rawBody: Buffer,
): { ok: boolean; taskId?: string; requestId?: string } {
  const timestamp = String(headers['x-webhook-timestamp'] ?? '');
  if (!/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return { ok: false };
  let parsed: { data?: { taskId?: string }; task_id?: string; request_id?: string };
  try {
    parsed = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return { ok: false };
  }
  const taskId = parsed.data?.taskId ?? parsed.task_id ?? '';
  const bodyHash = createHash('sha256').update(rawBody).digest('hex');
  const expected = createHmac('sha256', secret).update(`${taskId}.${timestamp}.${bodyHash}`).digest();
  const given = Buffer.from(String(headers['x-webhook-signature'] ?? ''), 'base64');
  return {
    ok: given.length === expected.length && timingSafeEqual(given, expected),
    taskId,
    requestId: parsed.request_id,
  };
}

/** Rows in the SQLite file of the bench's service (read beside it: WAL). */
function countRows(file: string, sql: string): number {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return Number((db.prepare(sql).pluck().get() as number | bigint) ?? 0);
  } finally {
    db.close();
  }
}

interface Receiver {
  url: string;
  verifiedTimes: number[];
  tasks: Set<string>;
  bad: number;
  repeats: number;
  /** Called with the count after each new verified task (the CPU window's instants). */
  onDelivery?: (count: number) => void;
  close(): Promise<void>;
}

async function startReceiver(secret: string): Promise<Receiver> {
  const sockets = new Set<Socket>();
  const seenDeliveries = new Set<string>();
  const receiver: Receiver = {
    url: '',
    verifiedTimes: [],
    tasks: new Set(),
    bad: 0,
    repeats: 0,
    close: async () => {},
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const verdict = verifyCallback(secret, req.headers, Buffer.concat(chunks));
      if (!verdict.ok || !verdict.taskId) {
        receiver.bad++;
        res.writeHead(401).end('bad signature');
        return;
      }
      if (verdict.requestId && seenDeliveries.has(verdict.requestId)) receiver.repeats++;
      else if (!receiver.tasks.has(verdict.taskId)) {
        if (verdict.requestId) seenDeliveries.add(verdict.requestId);
        receiver.tasks.add(verdict.taskId);
        receiver.verifiedTimes.push(performance.now());
        receiver.onDelivery?.(receiver.tasks.size);
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.keepAliveTimeout = 30_000;
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/mediaforge`;
  receiver.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

export async function benchWebhooks(
  mode: RunMode & {
    deliveries?: number;
    serviceNodeArgs?: string[];
    serviceEnv?: Record<string, string>;
    /**
     * Diagnosis: the tasks are finished by a full process whose delivery lane has no slots, so the
     * measured phase runs the delivery lane alone (its claims, signing, posts and records).
     */
    laneOnly?: boolean;
  },
): Promise<BenchOutput> {
  const n = mode.deliveries ?? (mode.quick ? 500 : 2000);
  const latencyMs = 500;
  const switches = { MEDIAFORGE_WEBHOOK_ALLOW_PRIVATE: '1', MEDIAFORGE_WEBHOOK_ALLOW_INSECURE: '1' };
  const dir = newServiceDir();
  const dbUrl = sqliteUrl(dir);
  const [account] = await createAccounts(dbUrl, 1);
  const receiver = await startReceiver(account.webhookSecret);
  try {
    // Phase 1: accept N tasks; no worker runs, so nothing finishes yet.
    const api = await startService({
      dir,
      dbUrl,
      role: 'api',
      env: { ...switches, MEDIAFORGE_SIMULATOR_LATENCY_MS: String(latencyMs) },
      label: 'api-only service',
    });
    const createStarted = performance.now();
    try {
      const agent = new Agent({ keepAlive: true, maxSockets: 50 });
      const shape = {
        method: 'POST' as const,
        path: '/api/v1/jobs/createTask',
        headers: { authorization: `Bearer ${account.apiKey}` },
        body: JSON.stringify({ model: MODEL, input: RUNNING_INPUT, callBackUrl: receiver.url }),
      };
      let next = 0;
      const failures: number[] = [];
      await Promise.all(
        Array.from({ length: 50 }, async () => {
          while (next < n) {
            next++;
            const status = await send(agent, new URL(api.url), shape);
            if (status !== 202) failures.push(status);
          }
        }),
      );
      agent.destroy();
      if (failures.length)
        throw new Error(`createTask with callBackUrl failed ${failures.length} times (first status ${failures[0]})`);
    } finally {
      await api.stop();
    }
    const createSeconds = (performance.now() - createStarted) / 1000;

    if (mode.laneOnly) {
      // Phase 1b: every task finished and its delivery enqueued, none attempted.
      const finisher = await startService({
        dir,
        dbUrl,
        env: {
          ...switches,
          MEDIAFORGE_SIMULATOR_LATENCY_MS: String(latencyMs),
          MEDIAFORGE_WORKER_DELIVERY_CONCURRENCY: '0',
        },
        label: 'service without delivery slots',
      });
      const file = dbUrl.replace(/^sqlite:/, '');
      try {
        const until = performance.now() + 120_000;
        while (countRows(file, 'SELECT COUNT(*) FROM webhook_deliveries') < n && performance.now() < until)
          await sleep(100);
      } finally {
        await finisher.stop();
      }
    }

    // Phase 2: the full service finishes them and delivers.
    const full = await startService({
      dir,
      dbUrl,
      env: { ...switches, MEDIAFORGE_SIMULATOR_LATENCY_MS: String(latencyMs), ...mode.serviceEnv },
      label: 'service',
      nodeArgs: mode.serviceNodeArgs,
    });
    const started = performance.now();
    const cpuAtStart = cpuMs(full.pid) ?? NaN;
    let cpuUsed = NaN;
    // The steady-state window: from the 10 % to the 90 % delivery, the service's CPU (/proc) read at
    // both instants, so start-up and the last tasks' drain are left out and every step of the tail
    // (claim, run, poll, store, resolve, enqueue, deliver) of the tasks in flight is in.
    const edges = [Math.max(1, Math.ceil(n / 10)), Math.floor((n * 9) / 10)] as const;
    const window: { count: number; cpu: number; bench: number }[] = [];
    receiver.onDelivery = (count) => {
      if (count === edges[0] || count === edges[1])
        window.push({ count, cpu: cpuMs(full.pid) ?? NaN, bench: ownCpuMs() });
    };
    const deadline = started + (mode.quick ? 60_000 : 180_000);
    try {
      while (receiver.tasks.size < n && performance.now() < deadline) await sleep(20);
      cpuUsed = (cpuMs(full.pid) ?? NaN) - cpuAtStart;
    } finally {
      receiver.onDelivery = undefined;
      await full.stop();
    }
    const perDelivery = (of: 'cpu' | 'bench') =>
      window.length === 2 ? (window[1][of] - window[0][of]) / (window[1].count - window[0].count) : NaN;
    const steadyCpuMsPerDelivery = perDelivery('cpu');
    const times = receiver.verifiedTimes;
    const spanSeconds = times.length > 1 ? (times[times.length - 1] - times[0]) / 1000 : NaN;
    const rate = times.length > 1 ? (times.length - 1) / spanSeconds : NaN;
    const missing = n - receiver.tasks.size;
    return {
      figures: {
        webhookDeliveriesPerSec: round(rate, 0),
        webhookDeliveries: times.length,
        webhookMissing: missing,
        webhookBadSignatures: receiver.bad,
        webhookFirstDeliveryAfterStartSeconds: round(times.length ? (times[0] - started) / 1000 : NaN, 2),
        webhookServiceCpuMsPerDelivery: round(steadyCpuMsPerDelivery, 3),
        webhookServiceCpuMsFromStartPerDelivery: round(cpuUsed / Math.max(1, times.length), 3),
        webhookBenchCpuMsPerDelivery: round(perDelivery('bench'), 3),
      },
      notes: [
        `webhooks: ${n} tasks accepted by an API-only process in ${round(createSeconds, 1)} s, then ${mode.laneOnly ? 'finished by a process without delivery slots and ' : ''}delivered by a full process (simulator latency ${latencyMs} ms, default worker concurrency): ${times.length} verified deliveries over ${round(spanSeconds, 2)} s, ${receiver.bad} bad signatures, ${receiver.repeats} repeats; the service used ${round(cpuUsed / 1000, 2)} s of CPU from its start to the last delivery (webhookServiceCpuMsFromStartPerDelivery, the figure's definition before issue 30); ` +
          `webhookServiceCpuMsPerDelivery: its CPU from the ${edges[0]}th to the ${edges[1]}th verified delivery ÷ the ${edges[1] - edges[0]} deliveries between (steady state, start-up and drain left out); webhookBenchCpuMsPerDelivery: the bench process's own CPU (its receiver verifying each signature) over the same window, on the same cores` +
          (missing ? `; ${missing} never arrived before the time limit (the rate covers those that did)` : ''),
      ],
    };
  } finally {
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) {
  const arg = process.argv.find((a) => /^--deliveries=\d+$/.test(a));
  console.log(
    JSON.stringify(
      await benchWebhooks({
        quick: process.argv.includes('--quick'),
        deliveries: arg ? Number(arg.split('=')[1]) : undefined,
        laneOnly: process.argv.includes('--lane-only'),
      }),
    ),
  );
}
