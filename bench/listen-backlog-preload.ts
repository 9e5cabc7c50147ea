/**
 * Diagnosis only (never in the figures): `serve` listens with Node's default backlog (511), so a
 * burst of thousands of connects overflows the accept queue; the kernel answers with SYN cookies
 * and some connections end reset. This preload makes every listen() without a backlog ask for
 * 8192 (the kernel caps it at net.core.somaxconn), to measure the proposed `backlog` option.
 *   node --import tsx --import ./bench/listen-backlog-preload.ts bin/mediaforge.js serve ...
 */
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (this: net.Server, ...args: unknown[]) {
  if (typeof args[0] === 'object' && args[0] !== null && !('backlog' in args[0]))
    args[0] = { ...args[0], backlog: 8192 };
  return (listen as (...a: unknown[]) => net.Server).apply(this, args);
} as typeof listen;
