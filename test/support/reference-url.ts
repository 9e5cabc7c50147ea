import { expect, inject } from 'vitest';

/**
 * A customer's file on the run's shared loopback reference host (test/support/reference-host-setup.ts):
 * `referenceUrl('/a.png')` is an https URL that answers a real PNG (by the path's extension).
 */
export function referenceUrl(path: string): string {
  return `${inject('referenceHost')}${path}`;
}

/**
 * What an upstream is sent for a customer's reference (issue 37 point 3): the service's own signed
 * link to the copy its check stored, under the service's public URL, never the customer's URL.
 */
export function referenceCopyLink(publicUrl: string) {
  const escaped = publicUrl.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return expect.stringMatching(new RegExp(`^${escaped}/api/v1/media/references%2F[^?]+\\?expires=\\d+&sig=`));
}
