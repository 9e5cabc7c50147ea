import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { systemResolver, type OutboundPolicy, type Resolver } from '../net/address-policy.js';
import { guardConnection, guardedLookup, type ConnectionCallback } from './guard.js';

/**
 * Keep-alive agents for webhook deliveries, one pair (http, https) per outbound policy. Every new
 * connection is checked exactly like the one-shot guarded agent's (the socket's own lookup, and
 * literal addresses before connecting); a kept connection was checked when it was made, and a
 * destination whose DNS now answers a private address gets no new connection. Reusing a
 * connection saves the connect, the receiver's accept and (https) the handshake on every delivery.
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

interface KeptAgent {
  createConnection(options: unknown, callback?: ConnectionCallback): unknown;
  keepSocketAlive(socket: Socket): boolean;
  freeSockets: NodeJS.ReadOnlyDict<Socket[]>;
}

/** The connect-time guard, the age stamp and the idle bounds, over http.Agent or https.Agent. */
function keep<T extends typeof http.Agent | typeof https.Agent>(Base: T, policy: OutboundPolicy): InstanceType<T> {
  const lookup = guardedLookup(policy);
  const base = Base.prototype as unknown as KeptAgent;
  const agent = new Base({
    keepAlive: true,
    timeout: IDLE_SOCKET_MS,
    maxFreeSockets: MAX_IDLE_PER_DESTINATION,
    scheduling: 'lifo',
  }) as InstanceType<T> & KeptAgent;
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

export interface KeptAgents {
  http: http.Agent;
  https: https.Agent;
}

/** Per resolver (the system's, or a test's stub), per pair of allow switches. */
const byResolver = new WeakMap<Resolver, Map<string, KeptAgents>>();

/** The keep-alive agents of a policy: the same pair for every delivery made under an equal policy. */
export function keptAgents(policy: OutboundPolicy): KeptAgents {
  const resolver = policy.resolver ?? systemResolver;
  let bySwitches = byResolver.get(resolver);
  if (!bySwitches) {
    bySwitches = new Map();
    byResolver.set(resolver, bySwitches);
  }
  const switches = `${policy.allowPrivate ? 1 : 0}${policy.allowInsecure ? 1 : 0}`;
  let agents = bySwitches.get(switches);
  if (!agents) {
    agents = { http: keep(http.Agent, policy), https: keep(https.Agent, policy) };
    bySwitches.set(switches, agents);
  }
  return agents;
}
