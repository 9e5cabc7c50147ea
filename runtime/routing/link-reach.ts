import type { DeploymentsPlan } from './deployments-file.js';

/** Whether a host names this machine (127.0.0.0/8, ::1, localhost, or the wildcard a link would turn into 127.0.0.1). */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || host === '0.0.0.0' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * The start-up refusal of a service whose own links could not reach an upstream (issue 37): an
 * upstream is sent the service's signed links (references, source clips: runtime/worker/
 * portable-input.ts) under MEDIAFORGE_PUBLIC_URL, or the listen address when it is unset. When
 * those links name this host and an upstream is elsewhere, every task with a reference would fail
 * at the provider, late and with the provider's words: the service refuses to start instead.
 * Returns the problem in one line, or undefined.
 */
export function loopbackLinkProblem(publicUrl: string, plan: DeploymentsPlan | undefined): string | undefined {
  if (!plan) return undefined;
  let links: URL;
  try {
    links = new URL(publicUrl);
  } catch {
    return undefined;
  }
  if (!isLoopbackHost(links.hostname)) return undefined;
  for (const [name, spec] of plan.upstreams) {
    if (!spec.baseUrl) continue;
    let upstream: URL;
    try {
      upstream = new URL(spec.baseUrl);
    } catch {
      continue;
    }
    if (!isLoopbackHost(upstream.hostname))
      return `upstream ${name} (${upstream.host}) is not on this host, but the links the service sends it name ${links.origin}, a loopback address it cannot reach: set MEDIAFORGE_PUBLIC_URL to the address the upstream reaches the service at`;
  }
  return undefined;
}
