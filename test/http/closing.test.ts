/**
 * Closing the service ends every connection that holds no answer: a keep-alive connection after its
 * answer, and one accepted that never sent a byte. Node's own idle sweep misses the second kind
 * (runtime/http/connections.ts), and `close` then waited for Node's 60 s headers timeout.
 */
import { connect, type Socket } from 'node:net';
import { Agent, request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startTestService } from '../support/service.js';

function ended(socket: Socket): Promise<void> {
  return new Promise((resolve) => socket.once('close', () => resolve()));
}

/** Keeps each connection open after its answer, as a browser or an SDK's pool does. */
const keepAlive = new Agent({ keepAlive: true, maxSockets: 8 });

function silentConnection(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** One GET on a kept-alive connection; answers its socket, still open after the answer. */
function keptAliveAnswer(port: number): Promise<{ status: number; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const req = request({ port, host: '127.0.0.1', path: '/openapi.json', agent: keepAlive });
    req.once('response', (response) => {
      response.resume();
      response.once('end', () => resolve({ status: response.statusCode ?? 0, socket: req.socket! }));
    });
    req.once('error', reject);
    req.end();
  });
}

describe('closing the service', () => {
  it('ends kept-alive connections and connections that never sent a request, and resolves', async () => {
    const t = await startTestService();
    const port = Number(new URL(t.url).port);
    // Answers first, so that Node's parsers are reused by the silent connections that follow.
    const kept = await Promise.all(Array.from({ length: 4 }, () => keptAliveAnswer(port)));
    expect(kept.map((k) => k.status)).toEqual([200, 200, 200, 200]);
    const silent = await Promise.all(Array.from({ length: 4 }, () => silentConnection(port)));
    const all = [...kept.map((k) => k.socket), ...silent];
    expect(all.some((socket) => socket.destroyed)).toBe(false);
    const allEnded = Promise.all(all.map(ended));
    await t.close();
    await allEnded;
    expect(all.every((socket) => socket.destroyed)).toBe(true);
    keepAlive.destroy();
  }, 20_000);
});
