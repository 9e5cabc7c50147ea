import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import ipaddr from 'ipaddr.js';

/** Headers a reverse proxy adds: on a loopback connection they mean the caller is whoever the proxy relayed. */
const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-real-ip'] as const;

/**
 * Whether a request may see operator detail (/metrics, the detail of /readyz):
 * - with a metrics token, only with `Authorization: Bearer <token>` (compared in constant time),
 *   from wherever it comes;
 * - without one, only a loopback caller: `request.ip` in 127.0.0.0/8 or ::1. With trusted proxies
 *   (MEDIAFORGE_TRUSTED_PROXIES) that is the client the proxies name; without, a loopback
 *   connection carrying a forwarding header is a proxy on this machine relaying someone else, and
 *   is not the operator either.
 */
export function operatorCheck(token: string | undefined, trustsProxies: boolean): (request: FastifyRequest) => boolean {
  if (!token) return (request) => isLoopback(request.ip) && (trustsProxies || !forwarded(request));
  const expected = digest(token);
  return (request) => {
    const given = /^bearer\s+(\S+)$/i.exec(request.headers.authorization?.trim() ?? '');
    return given !== null && timingSafeEqual(digest(given[1]), expected);
  };
}

function isLoopback(ip: string): boolean {
  return ipaddr.isValid(ip) && ipaddr.process(ip).range() === 'loopback';
}

function forwarded(request: FastifyRequest): boolean {
  return FORWARDING_HEADERS.some((name) => request.headers[name] !== undefined);
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
