import type { LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/** Answers a host name with every address it has (A and AAAA). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

/**
 * Which addresses outbound requests (webhooks, imports, reference fetches) may reach: public
 * unicast only. ipaddr.js classifies; anything it does not call `unicast` is refused, including
 * IPv4-mapped, the deprecated IPv4-compatible ::a.b.c.d form and NAT64 prefixes.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) parsed = v6.toIPv4Address();
    // ::a.b.c.d (IPv4-compatible, deprecated) sits in ::/96, which ipaddr.js calls reserved or unicast by version.
    else if (v6.match(ipaddr.IPv6.parse('::'), 96)) return false;
  }
  return parsed.range() === 'unicast';
}

export interface OutboundPolicy {
  /** Test-only: allow loopback and private destinations. */
  allowPrivate: boolean;
  /** Test-only: allow http and any port. */
  allowInsecure: boolean;
  /**
   * DNS for both checks (creation time and connect time); the system resolver when absent. Tests
   * inject a stub so that no query leaves the machine and rebinding can be staged.
   */
  resolver?: Resolver;
}

export type UrlProblem = 'syntax' | 'scheme' | 'port' | 'credentials' | 'address';

/** The URL rules without DNS: https on 443 or no port, no user or password. Returns the parsed URL or the problem. */
export function checkUrlShape(text: string, policy: OutboundPolicy): URL | UrlProblem {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'syntax';
  }
  if (url.protocol !== 'https:' && !(policy.allowInsecure && url.protocol === 'http:')) return 'scheme';
  if (url.port !== '' && url.port !== '443' && !policy.allowInsecure) return 'port';
  if (url.username !== '' || url.password !== '') return 'credentials';
  if (url.hostname === '') return 'syntax';
  return url;
}

/** The host's addresses (one if it is a literal). The URL parser already folds 127.1, 2130706433 and 0x7f.1 to 127.0.0.1. */
export async function resolveHost(hostname: string, resolver: Resolver = systemResolver): Promise<string[]> {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (ipaddr.isValid(bare)) return [bare];
  const answers = await resolver(bare);
  return answers.map((a) => a.address);
}

/** True when every address the host resolves to may be reached under the policy. */
export async function hostIsAllowed(hostname: string, policy: OutboundPolicy): Promise<boolean> {
  let addresses: string[];
  try {
    addresses = await resolveHost(hostname, policy.resolver);
  } catch {
    return false;
  }
  if (addresses.length === 0) return false;
  return policy.allowPrivate || addresses.every(isPublicAddress);
}
