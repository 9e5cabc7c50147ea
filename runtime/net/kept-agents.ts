import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { OutboundPolicy } from './address-policy.js';
import { guardConnection, guardedLookup, type ConnectionCallback } from './guard.js';

/**
 * Keep-alive agents for webhook deliveries, one pair (http, https) per service (Context.outbound).
 * Every new connection is checked exactly like the one-shot guarded agent's (the socket's own
 * lookup, and literal addresses before connecting); a kept connection was checked when it was
 * made, and a destination whose DNS now answers a private address gets no new connection. Reusing
 * a connection saves the connect, the receiver's accept and (https) the handshake per delivery.
 */

/**
 * An idle connection is closed after this long: below the 5 s keep-alive timeout of Node's own
 * servers (and most others), so the receiver rarely closes a socket just as a delivery reuses it.
 */
export const IDLE_SOCKET_MS = 4_000;
/** A connection is not reused after this age: a destination's DNS is looked up and checked again at least this often. */
export const MAX_SOCKET_AGE_MS = 60_000;
/** Idle connections kept per destination (host, port); the rest close when their request ends. */
export const MAX_IDLE_PER_DESTINATION = 16;
/** Idle connections kept over all destinations of one agent. */
export const MAX_IDLE_TOTAL = 256;

const bornAt = Symbol('bornAt');
type AgedSocket = Socket & { [bornAt]?: number };

/** The parts of Node's Agent this file overrides (public in Node, missing from its types). */
interface AgentInternals {
  createConnection(options: unknown, callback?: ConnectionCallback): unknown;
  keepSocketAlive(socket: Socket): boolean;
  freeSockets: NodeJS.ReadOnlyDict<Socket[]>;
}

/** The connect-time guard, the age stamp and the idle bounds, over http.Agent or https.Agent. */
function keptAgent<T extends typeof http.Agent | typeof https.Agent>(Base: T, policy: OutboundPolicy): InstanceType<T> {
  const lookup = guardedLookup(policy);
  const base = Base.prototype as unknown as AgentInternals;
  const agent = new Base({
    keepAlive: true,
    timeout: IDLE_SOCKET_MS,
    maxFreeSockets: MAX_IDLE_PER_DESTINATION,
    scheduling: 'lifo',
  }) as InstanceType<T> & AgentInternals;
  agent.createConnection = (options: http.ClientRequestArgs, callback?: ConnectionCallback) => {
    const guarded = guardConnection(options, policy, lookup, callback);
    if (!guarded) return undefined;
    const socket = base.createConnection.call(agent, guarded, callback) as AgedSocket;
    socket[bornAt] = Date.now();
    return socket;
  };
  agent.keepSocketAlive = (socket: AgedSocket) => {
    if (Date.now() - (socket[bornAt] ?? 0) > MAX_SOCKET_AGE_MS) return false;
    let idle = 0;
    for (const sockets of Object.values(agent.freeSockets)) idle += sockets?.length ?? 0;
    if (idle >= MAX_IDLE_TOTAL) return false;
    return base.keepSocketAlive.call(agent, socket);
  };
  return agent;
}

/** A service's delivery agents; `close` ends their connections (the service's close calls it). */
export class OutboundAgents {
  readonly http: http.Agent;
  readonly https: https.Agent;

  constructor(policy: OutboundPolicy) {
    this.http = keptAgent(http.Agent, policy);
    this.https = keptAgent(https.Agent, policy);
  }

  close(): void {
    this.http.destroy();
    this.https.destroy();
  }
}
