import { ApiError } from '../errors.js';
import { KeyPolicyInputError } from './key-policy.js';

/**
 * A policy refused by applyPolicyInput (the CLI's one validator) as the HTTP answer: 400 40050
 * invalid_key_policy, `param` the body field at fault (`policy.networks`), in the caller's language.
 * Any other error passes through unchanged.
 */
export function asKeyPolicyRefusal(error: unknown, prefix = ''): unknown {
  if (!(error instanceof KeyPolicyInputError)) return error;
  return new ApiError('invalid_key_policy', { param: `${prefix}${error.field}`, params: { reason: error.reason } });
}
