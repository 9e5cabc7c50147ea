import { ApiError } from '../errors.js';
import { checkUrlShape, hostIsAllowed, type OutboundPolicy } from '../net/address-policy.js';

const FIELD = 'callBackUrl';

/**
 * callBackUrl rules at creation: public HTTPS on 443, no credentials, resolving only to public
 * addresses. A URL refused for what the two test-only settings would allow (plain http, another
 * port, a loopback or private address) says so, naming them: an operator trying the service on one
 * machine otherwise meets a bare "Invalid callback URL".
 */
export async function checkCallbackUrl(url: string, policy: OutboundPolicy): Promise<void> {
  const shape = checkUrlShape(url, policy);
  if (shape === 'scheme' || shape === 'port') throw notPublic();
  if (typeof shape === 'string' || url.length > 2048) throw new ApiError('invalid_callback_url', { param: FIELD });
  if (await hostIsAllowed(shape.hostname, policy)) return;
  // Refused for its address (it resolves, to loopback or private ones), or because it does not resolve: only the first has the hint.
  const privateOnly = await hostIsAllowed(shape.hostname, { ...policy, allowPrivate: true });
  throw privateOnly ? notPublic() : new ApiError('invalid_callback_url', { param: FIELD });
}

function notPublic(): ApiError {
  const rule = 'callback_url_not_public';
  return new ApiError('invalid_callback_url', {
    param: FIELD,
    fieldErrors: [{ path: FIELD, rule, message: { key: rule, params: { field: FIELD } } }],
  });
}
