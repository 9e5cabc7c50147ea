import type { LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { Duplex } from 'node:stream';
import { isPublicAddress, systemResolver, type OutboundPolicy, type Resolver } from './address-policy.js';

/**
 * The SSRF-guarded way out: every outbound webhook request goes through an agent whose
 * connections check the address they are about to connect to. The check runs on the socket's own
 * lookup (and on literal addresses, which Node connects to without a lookup), so a name that
 * answered a public address when the task was created and a private one now (DNS rebinding) is
 * refused before any connection is made.
 */

/** Answers a host name with every address it has (A and AAAA). Injected in tests (or through the policy). */
export { systemResolver, type Resolver };

/** A destination the policy forbids; no connection was attempted. */
export class BlockedDestinationError extends Error {
  readonly code = 'EBLOCKEDDESTINATION';
  constructor(host: string, addresses: string[]) {
    super(
      `destination ${host} refused: ${addresses.length ? `non-public address ${addresses.join(', ')}` : 'no address'}`,
    );
  }
}

/** Addresses the policy refuses; one refused address refuses the whole answer (mixed A/AAAA included). */
function refused(addresses: string[], policy: OutboundPolicy): string[] {
  return policy.allowPrivate ? [] : addresses.filter((address) => !isPublicAddress(address));
}

/** A `lookup` for sockets: resolves with the policy's resolver (the system's by default), then refuses unless every answer is allowed. */
export function guardedLookup(policy: OutboundPolicy): LookupFunction {
  const resolver = policy.resolver ?? systemResolver;
  return (hostname: string, options: LookupOptions, callback) => {
    resolver(hostname).then(
      (answers) => {
        const bad = refused(
          answers.map((a) => a.address),
          policy,
        );
        if (answers.length === 0 || bad.length) return callback(new BlockedDestinationError(hostname, bad), []);
        const family = options.family === 4 || options.family === 6 ? options.family : undefined;
        const usable = family ? answers.filter((a) => a.family === family) : answers;
        if (usable.length === 0)
          return callback(
            Object.assign(new Error(`no IPv${family} address for ${hostname}`), { code: 'ENOTFOUND' }),
            [],
          );
        if (options.all) return callback(null, usable);
        return callback(null, usable[0].address, usable[0].family);
      },
      (error: NodeJS.ErrnoException) => callback(error, []),
    );
  };
}

export type ConnectionCallback = (err: Error | null, stream: Duplex) => void;

/** Checks a literal address (Node skips the lookup for those) and adds the guarded lookup. */
export function guardConnection(
  options: http.ClientRequestArgs,
  policy: OutboundPolicy,
  lookup: LookupFunction,
  callback?: ConnectionCallback,
): http.ClientRequestArgs | undefined {
  const host = String(options.host ?? options.hostname ?? '').replace(/^\[|\]$/g, '');
  if (isIP(host) && refused([host], policy).length) {
    const error = new BlockedDestinationError(host, [host]);
    if (callback) callback(error, undefined as unknown as Duplex);
    else throw error;
    return undefined;
  }
  return { ...options, lookup };
}

/** An agent (http or https) whose every connection is checked at connect time. No keep-alive: each request connects anew (file fetches; deliveries use runtime/net/kept-agents.ts). */
export function guardedAgent(secure: boolean, policy: OutboundPolicy): http.Agent {
  const lookup = guardedLookup(policy);
  if (secure) {
    return new (class extends https.Agent {
      createConnection(options: https.RequestOptions, callback?: ConnectionCallback) {
        const guarded = guardConnection(options, policy, lookup, callback);
        return guarded ? super.createConnection(guarded, callback) : undefined;
      }
    })({ keepAlive: false });
  }
  return new (class extends http.Agent {
    createConnection(options: http.ClientRequestArgs, callback?: ConnectionCallback) {
      const guarded = guardConnection(options, policy, lookup, callback);
      return guarded ? super.createConnection(guarded, callback) : undefined;
    }
  })({ keepAlive: false });
}
