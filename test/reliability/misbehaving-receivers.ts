import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Readable } from 'node:stream';

/**
 * Webhook receivers on 127.0.0.1 that misbehave the ways issue 12 (item 8) lists: slow (a byte a
 * second), huge (gigabytes streamed from a generator, never allocated), redirecting, 410, 429 with
 * Retry-After, oversized headers, hanging up mid-answer, never answering.
 */
export type Behaviour =
  | { kind: 'status'; status: number; headers?: Record<string, string>; body?: string }
  /** The raw answer, status line included, one byte a second: the status never arrives within any sane timeout. */
  | { kind: 'drip-status-line' }
  /** A status at once, then a body of one byte a second that never ends. */
  | { kind: 'drip-body'; status: number }
  /** A status, then `bytes` of body produced lazily by a generator (backpressure decides how much is ever made). */
  | { kind: 'huge'; status: number; bytes: number; declareLength: boolean }
  /** A header block larger than any HTTP parser accepts. */
  | { kind: 'huge-headers'; bytes: number }
  /** Half a status line, then the connection is destroyed. */
  | { kind: 'hang-up-mid-answer' }
  | { kind: 'hang' };

export interface MisbehavingReceiver {
  url: string;
  port: number;
  behaviour: Behaviour;
  /** Requests fully received (the webhook body read to its end). */
  requests: number;
  connections: number;
  /** Body bytes the receiver actually produced and handed to its socket (huge, drip). */
  bytesProduced: number;
  /** Wall-clock times at which each request's connection closed (the sender cut it, or it ended). */
  closedAt: number[];
  close(): Promise<void>;
}

const GENERATOR_CHUNK = Buffer.alloc(64 * 1024, 'x');

export async function startMisbehavingReceiver(behaviour: Behaviour): Promise<MisbehavingReceiver> {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const receiver: MisbehavingReceiver = {
    url: '',
    port: 0,
    behaviour,
    requests: 0,
    connections: 0,
    bytesProduced: 0,
    closedAt: [],
    close: async () => {},
  };
  /** Writes `bytes` one per second until the socket goes. */
  const drip = (socket: Socket, bytes: Buffer) => {
    let i = 0;
    const timer = setInterval(() => {
      if (socket.destroyed || i >= bytes.length) return clearInterval(timer);
      socket.write(bytes.subarray(i, i + 1));
      receiver.bytesProduced++;
      i++;
    }, 1000);
    timers.add(timer);
    socket.once('close', () => clearInterval(timer));
  };
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      receiver.requests++;
      res.socket?.once('close', () => receiver.closedAt.push(Date.now()));
      const b = receiver.behaviour;
      switch (b.kind) {
        case 'status':
          res.writeHead(b.status, { 'content-type': 'text/plain', ...b.headers }).end(b.body ?? '');
          return;
        case 'drip-status-line':
          drip(req.socket, Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'));
          return;
        case 'drip-body': {
          // A declared length, so the dripped bytes are a valid body: without one the body would be
          // chunked, the first raw byte a malformed chunk, and the client would drop the connection
          // after a second instead of waiting on the drip.
          res.writeHead(b.status, { 'content-type': 'text/plain', 'content-length': '1000000' });
          res.flushHeaders();
          drip(req.socket, Buffer.alloc(1_000_000, 'y'));
          return;
        }
        case 'huge': {
          res.writeHead(b.status, {
            'content-type': 'application/octet-stream',
            ...(b.declareLength ? { 'content-length': String(b.bytes) } : {}),
          });
          const produce = function* () {
            for (let left = b.bytes; left > 0; left -= GENERATOR_CHUNK.length) {
              const chunk = left >= GENERATOR_CHUNK.length ? GENERATOR_CHUNK : GENERATOR_CHUNK.subarray(0, left);
              receiver.bytesProduced += chunk.length;
              yield chunk;
            }
          };
          const stream = Readable.from(produce());
          stream.pipe(res);
          res.once('close', () => stream.destroy());
          return;
        }
        case 'huge-headers':
          req.socket.write(`HTTP/1.1 200 OK\r\nx-filler: ${'z'.repeat(b.bytes)}\r\ncontent-length: 0\r\n\r\n`);
          return;
        case 'hang-up-mid-answer':
          req.socket.end('HTTP/1.1 20');
          req.socket.destroy();
          return;
        case 'hang':
          return;
      }
    });
  });
  server.on('connection', (socket) => {
    receiver.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hooks`;
  receiver.close = async () => {
    for (const timer of timers) clearInterval(timer);
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}
