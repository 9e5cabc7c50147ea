import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { STORAGE_PLANS, STORAGE_UNLOCK_CREDITS, storagePlanFor } from '../../../generated/storage-plans.js';
import { loadCatalogue } from '../../../generator/load/catalogue.js';
import { loadStoragePlans, storagePlansPlugin } from '../../../generator/plugins/storage-plans/emit.js';
import { ROOT } from '../../support/root.js';
import { copySpec } from '../../support/spec-copy.js';

let copy: ReturnType<typeof copySpec> | undefined;
afterEach(() => copy?.remove());

describe('storage-plans plugin (generated/storage-plans.ts)', () => {
  it('emits the tiers of spec/storage-plans.yaml and unlocks at the first tier with room', () => {
    expect(STORAGE_PLANS).toEqual(loadStoragePlans(ROOT));
    expect(STORAGE_UNLOCK_CREDITS).toBe(STORAGE_PLANS.find((p) => p.limitBytes > 0)!.minPurchasedCredits);
    expect(storagePlanFor(STORAGE_UNLOCK_CREDITS - 1).limitBytes).toBe(0);
    expect(storagePlanFor(STORAGE_UNLOCK_CREDITS).limitBytes).toBeGreaterThan(0);
  });

  it('follows an edited spec file: its tiers and its unlock amount are in the emitted module', async () => {
    copy = copySpec();
    writeFileSync(
      join(copy.root, 'spec/storage-plans.yaml'),
      'plans:\n  - { name: locked, minPurchasedCredits: 0, limitBytes: 0 }\n  - { name: still-locked, minPurchasedCredits: 300, limitBytes: 0 }\n  - { name: roomy, minPurchasedCredits: 4200, limitBytes: 123456789 }\n',
    );
    const [file] = await storagePlansPlugin.emit({ catalogue: loadCatalogue(copy.root), emitted: new Map() });
    expect(file.path).toBe('storage-plans.ts');
    expect(file.contents).toContain("{ name: 'roomy', minPurchasedCredits: 4200, limitBytes: 123456789 }");
    expect(file.contents).toMatch(/export const STORAGE_UNLOCK_CREDITS: number = 4200;/);
    expect(file.contents).not.toContain('@ts-');
  });
});
