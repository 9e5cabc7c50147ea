/* generated/storage-plans.ts: the storage tiers of the asset library (spec/storage-plans.yaml), and the plan of a lifetime purchase total. */

/** One storage tier: reached from `minPurchasedCredits` lifetime purchases; `limitBytes` 0 is locked. */
export interface StoragePlan {
  name: string;
  minPurchasedCredits: number;
  limitBytes: number;
}

/** Every tier, in increasing order of minPurchasedCredits; the first starts at 0. */
export const STORAGE_PLANS: readonly StoragePlan[] = [{ name: 'free', minPurchasedCredits: 0, limitBytes: 0 }];

/** Lifetime purchases at which storage unlocks: the first plan with room (named in the storage_locked message). */
export const STORAGE_UNLOCK_CREDITS: number = 0;

/** The least room of a console user's playground library, whatever the user's own plan (`playground` in the spec file). */
export const PLAYGROUND_STORAGE_BYTES: number = 0;

/** The plan of an account whose owner has purchased `purchasedCredits` in all. */
export function storagePlanFor(purchasedCredits: number): StoragePlan {
  let plan = STORAGE_PLANS[0];
  for (const tier of STORAGE_PLANS) if (purchasedCredits >= tier.minPurchasedCredits) plan = tier;
  return plan;
}
