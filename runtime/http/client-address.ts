import ipaddr from 'ipaddr.js';

/**
 * The client a per-address limit counts: an IPv4 address, or the /64 an IPv6 address belongs to
 * (one subscriber usually gets a whole /64, so counting single IPv6 addresses would hand out 2^64
 * buckets). IPv4-mapped IPv6 addresses count as their IPv4 address.
 */
export function clientAddress(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toString();
  const parts = (address as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${parts.join(':')}::/64`;
}

/**
 * clientAddress with its answers kept, for the limiters that ask on every request: parsing an
 * address costs about 2 µs, a kept answer 10 ns. Bounded: many distinct callers start it over.
 */
export function keptClientAddresses(atMost = 10_000): (ip: string) => string {
  const known = new Map<string, string>();
  return (ip) => {
    let address = known.get(ip);
    if (address === undefined) {
      if (known.size >= atMost) known.clear();
      address = clientAddress(ip);
      known.set(ip, address);
    }
    return address;
  };
}
