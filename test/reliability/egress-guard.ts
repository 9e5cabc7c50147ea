import type { LookupAddress } from 'node:dns';
import type { Resolver } from '../../runtime/net/address-policy.js';

/**
 * Two guards that keep SSRF tests on this machine while the code under test believes it reaches
 * the internet:
 * - a stub DNS (injected as `config.outboundResolver`) that answers from a table, one answer per
 *   call in turn, so a name can be public at check time and private at connect time;
 * - a tripwire on the TCP binding every socket of this process connects through (net, http,
 *   https, tls, fetch): every attempt is recorded, and one to a non-loopback address is refused
 *   with ECONNREFUSED before the connect syscall, so no packet ever leaves.
 */

export interface ConnectAttempt {
  address: string;
  port: number;
  /** True when the tripwire refused it (a non-loopback destination). */
  refused: boolean;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;
const UV_ECONNREFUSED = -111;

interface TcpPrototype {
  connect: (req: unknown, address: string, port: number, ...rest: unknown[]) => number;
  connect6: (req: unknown, address: string, port: number, ...rest: unknown[]) => number;
}

export interface Tripwire {
  attempts: ConnectAttempt[];
  /** Attempts other than to the given loopback ports (the service and the test's own listeners). */
  outbound(ignorePorts: number[]): ConnectAttempt[];
  uninstall(): void;
}

/** Installs the tripwire for this process (vitest runs each file in its own fork). */
export function installTripwire(): Tripwire {
  const { TCP } = (process as unknown as { binding(name: string): { TCP: { prototype: TcpPrototype } } }).binding(
    'tcp_wrap',
  );
  const proto = TCP.prototype;
  const original = { connect: proto.connect, connect6: proto.connect6 };
  const attempts: ConnectAttempt[] = [];
  for (const method of ['connect', 'connect6'] as const) {
    proto[method] = function (this: unknown, req: unknown, address: string, port: number, ...rest: unknown[]) {
      const refused = !LOOPBACK.test(address);
      attempts.push({ address, port, refused });
      if (refused) return UV_ECONNREFUSED;
      return original[method].call(this, req, address, port, ...rest);
    };
  }
  return {
    attempts,
    outbound: (ignorePorts) => attempts.filter((a) => a.refused || !ignorePorts.includes(a.port)),
    uninstall() {
      proto.connect = original.connect;
      proto.connect6 = original.connect6;
    },
  };
}

export interface StubDns {
  resolver: Resolver;
  /** Names and the answers of their successive lookups (the last one repeats); no entry: ENOTFOUND. */
  set(name: string, answers: string[][]): void;
  /** Lookups per name since the last reset. */
  calls: Map<string, number>;
  reset(): void;
}

export function stubDns(): StubDns {
  const table = new Map<string, string[][]>();
  const calls = new Map<string, number>();
  const resolver: Resolver = async (hostname) => {
    const name = hostname.toLowerCase();
    const n = calls.get(name) ?? 0;
    calls.set(name, n + 1);
    const answers = table.get(name);
    if (!answers) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return (answers[Math.min(n, answers.length - 1)] ?? []).map(
      (address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 }),
    );
  };
  return {
    resolver,
    set: (name, answers) => void table.set(name.toLowerCase(), answers),
    calls,
    reset() {
      table.clear();
      calls.clear();
    },
  };
}
