/**
 * A deployment's state as the operator console shows it: the state's own word (the one
 * `deployments status`, /readyz and docs/operating.md use) in a badge whose colour says how bad it
 * is. The colours are BASE_CSS's `.deployment-state[data-state=...]` rules (runtime/console/pages.ts);
 * a state without a rule of its own (one a newer service reports) keeps the plain outlined badge,
 * so it is still shown, word and all, and never passes for `ok`.
 */
import { h } from './common.js';
import { dateTime } from './console-ui.js';

export function deploymentStateBadge(state: string, coolingUntil: string | null): HTMLSpanElement {
  return h('span', {
    class: 'badge deployment-state',
    'data-state': state,
    text: coolingUntil ? `${state} → ${dateTime(coolingUntil)}` : state,
  });
}
