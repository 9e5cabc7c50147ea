import type { Context } from '../context.js';
import { ApiError, fieldIssue } from '../errors.js';
import type { PreparedRequest } from './prepare-request.js';

/** A value as the answer names it: text as it is, anything else as JSON. */
const shown = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/**
 * Issue 37: a request whose values no route of its model can take (a ratio a provider has no size
 * for, a field a profile does not take) could only wait for a deployment that will never come.
 * It is answered 400 input_not_served (40030), one field problem per field at fault naming the
 * value and what the deployments take instead, before the key's policy, the funds and the
 * deployments' health: it depends on the deployments file alone, so retrying never helps.
 * Undefined when some route takes the input (or the model has none: availability answers that).
 */
export function inputNotServed(ctx: Context, request: PreparedRequest): ApiError | undefined {
  const refusals = ctx.deployments.unservable(request.model.info, request.input);
  if (!refusals?.length) return undefined;
  const issues = refusals.map(({ field, value, takes }) =>
    takes.length
      ? fieldIssue(`input.${field}`, 'not_served', 'not_served', {
          value: shown(value),
          offered: takes.map(shown).join(', '),
        })
      : fieldIssue(`input.${field}`, 'not_served', 'not_served_field'),
  );
  return new ApiError('input_not_served', { fieldErrors: issues, param: issues[0].path });
}
