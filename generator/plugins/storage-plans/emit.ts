import type { Plugin } from '../../plugin.js';
import { readYaml } from '../../load/read-yaml.js';
import { printModule } from '../../print/module.js';
import { SpecError, type SpecProblem } from '../../load/spec-error.js';

const FILE = 'spec/storage-plans.yaml';

export interface StoragePlanSpec {
  name: string;
  minPurchasedCredits: number;
  limitBytes: number;
}

/** Reads and checks spec/storage-plans.yaml under `root`; every problem is reported as file:line. */
export function loadStoragePlans(root: string): StoragePlanSpec[] {
  const { source, problems } = readYaml(root, FILE);
  if (!source) throw new SpecError(problems);
  const found: SpecProblem[] = [];
  const data = source.data as { plans?: unknown } | null;
  const plans = data?.plans;
  if (!Array.isArray(plans) || plans.length === 0)
    throw new SpecError([source.problem(['plans'], 'plans must be a non-empty list')]);
  const out: StoragePlanSpec[] = [];
  const names = new Set<string>();
  plans.forEach((plan: Record<string, unknown>, index) => {
    const at = (key: string) => ['plans', index, key];
    const keys = Object.keys(plan ?? {});
    for (const key of keys)
      if (!['name', 'minPurchasedCredits', 'limitBytes'].includes(key))
        found.push(source.problem(at(key), `unknown key "${key}"`));
    const { name, minPurchasedCredits, limitBytes } = plan ?? {};
    if (typeof name !== 'string' || !/^[a-z][a-z0-9-]{0,31}$/.test(name))
      found.push(source.problem(at('name'), 'name must be a lowercase word (a-z, 0-9, -)'));
    else if (names.has(name)) found.push(source.problem(at('name'), `plan "${name}" is listed twice`));
    else names.add(name);
    if (!Number.isSafeInteger(minPurchasedCredits) || (minPurchasedCredits as number) < 0)
      found.push(source.problem(at('minPurchasedCredits'), 'minPurchasedCredits must be a whole number >= 0'));
    if (!Number.isSafeInteger(limitBytes) || (limitBytes as number) < 0)
      found.push(source.problem(at('limitBytes'), 'limitBytes must be a whole number >= 0'));
    const previous = out[out.length - 1];
    if (index === 0 && minPurchasedCredits !== 0)
      found.push(source.problem(at('minPurchasedCredits'), 'the first plan must start at 0 credits'));
    if (previous && typeof minPurchasedCredits === 'number' && minPurchasedCredits <= previous.minPurchasedCredits) {
      found.push(source.problem(at('minPurchasedCredits'), 'plans must be in increasing order of minPurchasedCredits'));
    }
    out.push({ name: String(name), minPurchasedCredits: Number(minPurchasedCredits), limitBytes: Number(limitBytes) });
  });
  if (!found.length && !out.some((plan) => plan.limitBytes > 0))
    found.push(
      source.problem(['plans'], 'at least one plan must have limitBytes > 0 (storage must be able to unlock)'),
    );
  if (found.length) throw new SpecError(found);
  return out;
}

/** The playground's allowance (`playground.limitBytes`, optional: 0 when absent), checked as file:line. */
export function loadPlaygroundAllowance(root: string): number {
  const { source, problems } = readYaml(root, FILE);
  if (!source) throw new SpecError(problems);
  const playground = (source.data as { playground?: unknown } | null)?.playground;
  if (playground === undefined) return 0;
  const found: SpecProblem[] = [];
  if (typeof playground !== 'object' || playground === null || Array.isArray(playground))
    throw new SpecError([source.problem(['playground'], 'playground must be a map with limitBytes')]);
  for (const key of Object.keys(playground))
    if (key !== 'limitBytes') found.push(source.problem(['playground', key], `unknown key "${key}"`));
  const { limitBytes } = playground as { limitBytes?: unknown };
  if (!Number.isSafeInteger(limitBytes) || (limitBytes as number) < 0)
    found.push(source.problem(['playground', 'limitBytes'], 'limitBytes must be a whole number >= 0'));
  if (found.length) throw new SpecError(found);
  return limitBytes as number;
}

/** generated/storage-plans.ts: the storage tiers of the asset library, and the plan of a lifetime purchase total (code: ./template.ts). */
export const storagePlansPlugin: Plugin = {
  name: 'storage-plans',
  emit: ({ catalogue }) => {
    const plans = loadStoragePlans(catalogue.root);
    return [
      {
        path: 'storage-plans.ts',
        inputs: [FILE],
        contents: printModule({
          template: new URL('./template.ts', import.meta.url),
          values: {
            STORAGE_PLANS: plans,
            STORAGE_UNLOCK_CREDITS: plans.find((plan) => plan.limitBytes > 0)!.minPurchasedCredits,
            PLAYGROUND_STORAGE_BYTES: loadPlaygroundAllowance(catalogue.root),
          },
        }),
      },
    ];
  },
};
