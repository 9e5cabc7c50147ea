import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STORAGE_PLANS, storagePlanFor } from '../../generated/storage-plans.js';
import { loadStoragePlans } from '../../generator/plugins/storage-plans/emit.js';
import { ROOT } from '../support/root.js';
import { copySpec } from '../support/spec-copy.js';

describe('storage plans (spec/storage-plans.yaml -> generated/storage-plans.ts)', () => {
  it('the generated tiers are the spec file', () => {
    expect(STORAGE_PLANS).toEqual(loadStoragePlans(ROOT));
    expect(STORAGE_PLANS[0]).toMatchObject({ minPurchasedCredits: 0, limitBytes: 0 });
  });

  it.each([
    [0, 'locked'],
    [999, 'locked'],
    [1000, 'basic'],
    [9999, 'basic'],
    [10000, 'plus'],
    [10_000_000, 'plus'],
  ])('%i credits purchased in all: %s', (credits, plan) => {
    expect(storagePlanFor(credits).name).toBe(plan);
  });

  it('a broken file is reported as file:line, never as a stack trace', () => {
    const copy = copySpec();
    try {
      writeFileSync(
        join(copy.root, 'spec/storage-plans.yaml'),
        'plans:\n  - name: free\n    minPurchasedCredits: 5\n    limitBytes: 0\n  - name: Big Plan\n    minPurchasedCredits: 1\n    limitBytes: -1\n    color: red\n',
      );
      expect(() => loadStoragePlans(copy.root)).toThrowError(
        [
          'spec/storage-plans.yaml:3:5: the first plan must start at 0 credits',
          'spec/storage-plans.yaml:8:5: unknown key "color"',
          'spec/storage-plans.yaml:5:5: name must be a lowercase word (a-z, 0-9, -)',
          'spec/storage-plans.yaml:7:5: limitBytes must be a whole number >= 0',
          'spec/storage-plans.yaml:6:5: plans must be in increasing order of minPurchasedCredits',
        ].join('\n'),
      );
    } finally {
      copy.remove();
    }
  });
});
