import type { ProbeResult } from '../deployments/deployment.js';
import { UpstreamError } from '../deployments/upstream-error.js';

/**
 * What a probe's answer says about the operator's settings. `expected` are the statuses of the
 * protocol's own answer at the right path with an accepted key; otherwise 401 and 403 are the key
 * (refused by the upstream), 404 and 405 the path (the baseUrl points where the protocol is not
 * served: `/api/v1` missing, or `/v1` where `/api/v1` is meant), anything else a failure as is.
 */
export function probeOfAnswer(what: string, status: number, expected: readonly number[]): ProbeResult {
  const detail = `${what}: status ${status}`;
  if (expected.includes(status)) return { ok: true, outcome: 'ok', status, detail };
  if (status === 401 || status === 403) return { ok: false, outcome: 'key refused', status, detail };
  if (status === 404 || status === 405) return { ok: false, outcome: 'wrong path', status, detail };
  return { ok: false, outcome: 'failed', status, detail };
}

/** A probe that got no answer: nothing reached the upstream (refused, unresolvable, no answer in time), or the answer broke off. */
export function probeOfError(error: unknown): ProbeResult {
  const detail = (error as Error).message;
  if (error instanceof UpstreamError && (error.failure === 'unreachable' || error.failure === 'ambiguous'))
    return { ok: false, outcome: 'unreachable', detail };
  return { ok: false, outcome: 'failed', detail };
}
