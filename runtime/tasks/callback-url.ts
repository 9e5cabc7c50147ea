import { ApiError } from '../errors.js';
import { checkUrlShape, hostIsAllowed, type OutboundPolicy } from '../net/address-policy.js';

/** callBackUrl rules at creation: public HTTPS on 443, no credentials, resolving only to public addresses. */
export async function checkCallbackUrl(url: string, policy: OutboundPolicy): Promise<void> {
  const shape = checkUrlShape(url, policy);
  if (typeof shape === 'string' || url.length > 2048 || !(await hostIsAllowed(shape.hostname, policy))) {
    throw new ApiError('invalid_callback_url', { param: 'callBackUrl' });
  }
}
