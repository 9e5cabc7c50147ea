import { catalogue } from '../../generated/catalogue.js';
import { modelsNotServedBy, notServedText } from '../../generated/provider-mappings.js';
import type { InputRefusal } from '../deployments/deployment.js';
import type { DeploymentsPlan } from './deployments-file.js';
import type { Deployments } from './router.js';

/** A routed model whose default request (every field left out) none of its routes can take. */
export interface DefaultRequestWarning {
  model: string;
  refusals: InputRefusal[];
}

/** The models a kind of upstream the file uses cannot run, and why (derived by the generator). */
export type NotServedByKind = Record<string, { model: string; why: string }[]>;

/**
 * Issue 37: `deployments check` warns of a routed model whose default request no route can take
 * (a provider with no value for a field's default, a ratio it has no size for): every request
 * that leaves that field out would be answered 400 40030. The default request is the model's
 * defaults, what the validator fills in for a field left out.
 */
export function defaultRequestWarnings(plan: DeploymentsPlan, deployments: Deployments): DefaultRequestWarning[] {
  const warnings: DefaultRequestWarning[] = [];
  for (const id of plan.routes.keys()) {
    const info = catalogue.get(id)?.info;
    if (!info) continue;
    const defaults = Object.fromEntries(
      Object.entries(info.inputSchema.properties).flatMap(([field, schema]) =>
        'default' in schema ? [[field, schema.default]] : [],
      ),
    );
    const refusals = deployments.unservable(info, defaults);
    if (refusals?.length) warnings.push({ model: id, refusals });
  }
  return warnings;
}

/** For each kind of upstream the file names, the catalogue models it cannot run (none routed there: the file would be refused). */
export function notServedByKinds(plan: DeploymentsPlan): NotServedByKind {
  const kinds = [...new Set([...plan.upstreams.values()].map((u) => u.kind))].sort();
  const out: NotServedByKind = {};
  for (const kind of kinds) {
    const list = modelsNotServedBy(kind).map(({ model, reason }) => ({ model, why: notServedText(kind, reason) }));
    if (list.length) out[kind] = list;
  }
  return out;
}

/** A value as the check prints it. */
const shown = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/** `warning: <model>: its default request cannot be served by any of its routes: input.aspect_ratio adaptive (...)`. */
export function defaultRequestLine(warning: DefaultRequestWarning): string {
  const fields = warning.refusals.map(
    (r) =>
      `input.${r.field} ${shown(r.value)} (the deployments take ${r.takes.length ? r.takes.map(shown).join(', ') : `no ${r.field}`})`,
  );
  return `warning: ${warning.model}: its default request cannot be served by any of its routes: ${fields.join('; ')}: a request that leaves ${warning.refusals.map((r) => r.field).join(' or ')} out is answered 400 40030`;
}
