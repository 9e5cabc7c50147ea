import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The HTTP server's connections, each known to hold a response in flight or not, so that closing
 * the service ends every connection that holds none. Node's own `closeIdleConnections` skips a
 * connection that was accepted and never sent a byte (its parser, taken from Node's pool, still
 * looks busy): seen in the suites, such a connection held `close` open until Node's 60 s headers
 * timeout ended it.
 */
export interface Connections {
  /** Ends every connection with no response in flight; one mid-answer is left to finish. */
  closeIdle(): void;
}

export function trackConnections(server: Server): Connections {
  const open = new Set<Socket>();
  const answering = new Map<Socket, number>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      answering.delete(socket);
    });
  });
  server.on('request', (request, response) => {
    const socket = request.socket;
    answering.set(socket, (answering.get(socket) ?? 0) + 1);
    response.once('close', () => {
      const left = (answering.get(socket) ?? 1) - 1;
      if (left > 0) answering.set(socket, left);
      else answering.delete(socket);
    });
  });
  return {
    closeIdle() {
      for (const socket of open) if (!answering.has(socket)) socket.destroy();
    },
  };
}
