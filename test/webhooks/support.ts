import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, expect } from 'vitest';
import type { Config } from '../../runtime/config.js';
import type { ManualClock } from '../../runtime/clock.js';
import { isTerminal } from '../../runtime/tasks/states.js';
import { eventually } from '../support/eventually.js';
import { startTestService, type TestService } from '../support/service.js';

export const MODEL = 'vendor_b/family_c-2.6/reference-to-video';

/** Switches the webhook tests need for loopback receivers; never on outside tests. */
export const LOOPBACK = { webhookAllowPrivate: true, webhookAllowInsecure: true } as const;

export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw bytes received, as text. */
  body: string;
  /** True when the sender hung up before this receiver answered. */
  aborted: boolean;
}

/** What a receiver answers to the n-th request (0-based): a status, a redirect, or nothing ever. */
export type Answer = number | 'hang' | { status: number; headers?: Record<string, string>; body?: string };

export interface Receiver {
  url: string;
  port: number;
  requests: Received[];
  /** TCP connections accepted, whether or not a request followed. */
  connections: number;
  answer: (index: number, request: Received) => Answer;
  /** Resolves once no accepted connection is open: every request a dead sender got onto the wire is in `requests`. */
  quiet(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** A real HTTP receiver on 127.0.0.1 that records every request and connection. */
export async function startReceiver(
  answer: (index: number, request: Received) => Answer = () => 200,
): Promise<Receiver> {
  const sockets = new Set<Socket>();
  const receiver: Receiver = {
    url: '',
    port: 0,
    requests: [],
    connections: 0,
    answer,
    quiet: async (timeoutMs = 10_000) => {
      // A socket's close comes after the end of the request read from it, so an empty set means
      // nothing a sender wrote is still waiting in this process's queue of events.
      for (const until = Date.now() + timeoutMs; sockets.size > 0; ) {
        if (Date.now() > until) throw new Error(`receiver: ${sockets.size} connections still open`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const received: Received = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        aborted: false,
      };
      const index = receiver.requests.length;
      receiver.requests.push(received);
      res.on('close', () => {
        if (!res.writableFinished) received.aborted = true;
      });
      const reply = receiver.answer(index, received);
      if (reply === 'hang') return;
      const { status, headers, body } =
        typeof reply === 'number'
          ? { status: reply, headers: {}, body: statusText(reply) }
          : { body: '', headers: {}, ...reply };
      res.writeHead(status, { 'content-type': 'text/plain', ...headers });
      res.end(body);
    });
  });
  const statusText = (code: number) => (code >= 200 && code < 300 ? 'ok' : `status ${code}`);
  server.on('connection', (socket) => {
    receiver.connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hooks/mediaforge?source=test`;
  return receiver;
}

/**
 * The task-callback formula of the specification, written independently of the runtime:
 * base64(HMAC-SHA256(secret, "<taskId>.<timestamp>.<sha256_hex(raw body)>")), compared in constant
 * time. The key is the account secret string as shown (whsec_ prefix included).
 */
export function verifyCallback(secret: string, headers: IncomingHttpHeaders, rawBody: string): boolean {
  const timestamp = String(headers['x-webhook-timestamp'] ?? '');
  const signature = String(headers['x-webhook-signature'] ?? '');
  if (!/^\d+$/.test(timestamp)) return false;
  const parsed = JSON.parse(rawBody) as { data?: { taskId?: string }; task_id?: string };
  const taskId = parsed.data?.taskId ?? parsed.task_id ?? '';
  const digest = createHash('sha256').update(Buffer.from(rawBody, 'utf8')).digest('hex');
  const expected = createHmac('sha256', secret).update(`${taskId}.${timestamp}.${digest}`).digest();
  const given = Buffer.from(signature, 'base64');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export async function createTask(t: TestService, key: string, callBackUrl?: string, prompt = 'a lighthouse at dusk') {
  const response = await t.call('POST', '/api/v1/jobs/createTask', {
    key,
    body: { model: MODEL, input: { prompt }, ...(callBackUrl ? { callBackUrl } : {}) },
  });
  if (response.status !== 202) throw new Error(`createTask: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.data.taskId as string;
}

export async function taskState(t: TestService, taskId: string): Promise<string> {
  const row = await t.service.ctx.db.kysely
    .selectFrom('tasks')
    .select('state')
    .where('id', '=', taskId)
    .executeTakeFirstOrThrow();
  return row.state;
}

/** Manual-clock runs: passes of the worker until the task is terminal; deliveries are then written but not yet attempted. */
export async function driveToTerminal(
  t: TestService,
  clock: ManualClock,
  taskId: string,
  stepMs = 200,
): Promise<string> {
  for (let pass = 0; pass < 50; pass++) {
    await t.service.worker!.runOnce();
    const state = await taskState(t, taskId);
    if (isTerminal(state)) return state;
    clock.advance(stepMs);
  }
  throw new Error(`task ${taskId} did not finish`);
}

export async function deliveriesOf(t: TestService, taskId: string) {
  return t.service.ctx.db.kysely
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('task_id', '=', taskId)
    .orderBy('kind')
    .orderBy('id')
    .execute();
}

/** Background-worker tests: the receiver has the request a moment before the worker records the outcome; wait for the rows to be finished. */
export async function settledDeliveriesOf(t: TestService, taskId: string, count: number) {
  return eventually(async () => {
    const rows = await deliveriesOf(t, taskId);
    return rows.length === count && rows.every((row) => row.state !== 'pending') && rows;
  }, `${count} finished deliveries of ${taskId}`);
}

/** The record as a client compares it: signed links (url, expiresAt) left out; they are fresh on every read. */
export function withoutLinks(value: any) {
  const copy = structuredClone(value);
  const record = copy?.output !== undefined ? copy : copy?.data;
  for (const asset of record?.output?.assets ?? []) {
    expect(asset.url).toMatch(/[?&]sig=/);
    delete asset.url;
    delete asset.expiresAt;
  }
  return copy;
}

/** A webhook suite's service (LOOPBACK, so it may call the receiver) and the receiver it calls. */
export interface ServiceAndReceiver {
  t: TestService;
  receiver: Receiver;
}

/**
 * Registers a beforeAll that starts a service with LOOPBACK and `config`, then a receiver; and an
 * afterAll that closes the receiver, then the service. Read the fields inside hooks and tests.
 */
export function serviceAndReceiverForSuite(config: Partial<Config> = {}): ServiceAndReceiver {
  const suite = {} as ServiceAndReceiver;
  beforeAll(async () => {
    suite.t = await startTestService({ ...LOOPBACK, ...config });
    suite.receiver = await startReceiver();
  });
  afterAll(async () => {
    await suite.receiver?.close();
    await suite.t?.close();
  });
  return suite;
}
