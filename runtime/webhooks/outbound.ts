import type { LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { Duplex } from 'node:stream';
import {
  checkUrlShape,
  isPublicAddress,
  systemResolver,
  type OutboundPolicy,
  type Resolver,
} from '../net/address-policy.js';

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

type ConnectionCallback = (err: Error | null, stream: Duplex) => void;

/** Checks a literal address (Node skips the lookup for those) and adds the guarded lookup. */
function guardConnection(
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

/** An agent (http or https) whose every connection is checked at connect time. No keep-alive: each attempt connects anew. */
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

export interface PostOptions {
  policy: OutboundPolicy;
  /** Total time for connect, send and answer. */
  timeoutMs: number;
  /** The most of the answer's body that is read (64 KiB). */
  maxResponseBytes?: number;
}

export interface PostResult {
  /** The HTTP status, when one arrived. */
  status: number | null;
  /** Why the attempt failed without a status (or a short excerpt of a non-2xx answer). */
  error: string | null;
  /** The first bytes of the answer (capped). */
  responseExcerpt: string;
}

export const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * POSTs `body` once. Never follows redirects (the 3xx is returned as is), never throws: a refused
 * destination, a connection error or the timeout come back as `error`.
 */
export function postOnce(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: PostOptions,
): Promise<PostResult> {
  const shape = checkUrlShape(url, options.policy);
  if (typeof shape === 'string')
    return Promise.resolve({ status: null, error: `invalid URL (${shape})`, responseExcerpt: '' });
  const secure = shape.protocol === 'https:';
  const agent = guardedAgent(secure, options.policy);
  const cap = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  const payload = Buffer.from(body, 'utf8');
  return new Promise<PostResult>((resolve) => {
    let status: number | null = null;
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const finish = (error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      agent.destroy();
      resolve({
        status,
        error: status === null ? error : null,
        responseExcerpt: Buffer.concat(chunks).toString('utf8'),
      });
    };
    const request = (secure ? https : http).request({
      protocol: shape.protocol,
      hostname: shape.hostname.replace(/^\[|\]$/g, ''),
      port: shape.port || (secure ? 443 : 80),
      path: `${shape.pathname}${shape.search}`,
      method: 'POST',
      agent,
      headers: { ...headers, 'Content-Length': String(payload.length) },
    });
    const timer = setTimeout(() => finish(`timeout after ${options.timeoutMs} ms`), options.timeoutMs);
    request.on('response', (response) => {
      status = response.statusCode ?? null;
      response.on('data', (chunk: Buffer) => {
        if (received < cap) chunks.push(chunk.subarray(0, cap - received));
        received += chunk.length;
        if (received >= cap) finish(null);
      });
      response.on('end', () => finish(null));
      response.on('error', () => finish(null));
    });
    request.on('error', (error: NodeJS.ErrnoException) =>
      finish(error instanceof BlockedDestinationError ? error.message : `${error.code ?? 'error'}: ${error.message}`),
    );
    request.end(payload);
  });
}
