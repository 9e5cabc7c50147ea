/** What settling a hold of `held` credits for a `charge` takes: never below 0, never above the hold (the rest returns to available). */
export function settledCharge(charge: number, held: number): number {
  return Math.min(Math.max(0, charge), held);
}
