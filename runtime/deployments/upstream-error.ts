/**
 * What went wrong talking to an upstream, in the classes the router and the metrics need:
 * - `unreachable`: nothing reached the upstream (connection refused, DNS failure, the request
 *   failed before its body was written): nothing can exist there, another deployment may be tried;
 * - `busy` (429) and `server` (5xx) answered to a submit: nothing was created, fail over;
 * - `unauthorized` (401, 402): the operator's key or account at the upstream, not the caller's
 *   request: fail over, and count against the deployment;
 * - `configuration` (404, 405 answered to a submit): the deployment's URL is wrong (a baseUrl
 *   without its `/api/v1`, another protocol's path): the operator's fault, not the caller's request:
 *   fail over, and count against the deployment;
 * - `rejected` (any other 4xx): the upstream refused the request itself (invalid input, content
 *   policy, 403): the task fails with the upstream's reason, never tried elsewhere;
 * - `ambiguous`: the body was sent and no answer came (timeout, reset): the job may exist;
 * - `lost`: the upstream no longer knows a job it accepted (404 on poll);
 * - `protocol`: an answer that does not follow the protocol.
 */
export type FailureClass =
  | 'unreachable'
  | 'busy'
  | 'server'
  | 'unauthorized'
  | 'configuration'
  | 'rejected'
  | 'ambiguous'
  | 'lost'
  | 'protocol';

export const FAILURE_CLASSES: readonly FailureClass[] = [
  'unreachable',
  'busy',
  'server',
  'unauthorized',
  'configuration',
  'rejected',
  'ambiguous',
  'lost',
  'protocol',
];

export class UpstreamError extends Error {
  constructor(
    readonly failure: FailureClass,
    message: string,
    readonly details: {
      status?: number;
      /** The upstream's Retry-After (429, 503), in milliseconds. */
      retryAfterMs?: number;
      /** The upstream's own English reason (a refusal), before scrubbing. */
      reason?: string;
      /** The URL path a submit was answered 404 or 405 at (`configuration`): no query, no host. */
      path?: string;
    } = {},
  ) {
    super(message);
    this.name = 'UpstreamError';
  }

  /** Whether another deployment may be tried: nothing can exist at this one. */
  get failsOver(): boolean {
    return (
      this.failure === 'unreachable' ||
      this.failure === 'busy' ||
      this.failure === 'server' ||
      this.failure === 'unauthorized' ||
      this.failure === 'configuration'
    );
  }

  /** The same error, of the same class, with its texts rewritten (the upstream's redactor: runtime/upstreams/redacted-deployment.ts). */
  rewritten(rewrite: (text: string) => string): UpstreamError {
    const { reason, path, ...details } = this.details;
    return new UpstreamError(this.failure, rewrite(this.message), {
      ...details,
      ...(reason !== undefined ? { reason: rewrite(reason) } : {}),
      ...(path !== undefined ? { path: rewrite(path) } : {}),
    });
  }
}

/**
 * A result larger than the service takes (MEDIAFORGE_UPSTREAM_RESULT_MAX_BYTES): the same file
 * would come again, so the task fails at once instead of downloading it up to the cap per retry.
 */
export class ResultTooLargeError extends UpstreamError {
  constructor(
    readonly maxBytes: number,
    readonly what: string,
  ) {
    super('protocol', `${what}: more than the ${maxBytes} bytes a result may have`);
    this.name = 'ResultTooLargeError';
  }

  override rewritten(rewrite: (text: string) => string): UpstreamError {
    return new ResultTooLargeError(this.maxBytes, rewrite(this.what));
  }
}

/** The class of an HTTP status answered to a request. */
export function statusClass(status: number): FailureClass {
  if (status === 429) return 'busy';
  if (status >= 500) return 'server';
  if (status === 401 || status === 402) return 'unauthorized';
  return 'rejected';
}

/** The class of an HTTP status answered to a submit: 404 and 405 say the deployment's URL is wrong, not the caller's request. */
export function submitStatusClass(status: number): FailureClass {
  return status === 404 || status === 405 ? 'configuration' : statusClass(status);
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null | undefined, now: number): number | undefined {
  if (!value) return undefined;
  if (/^\d{1,7}$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
