import type { HoldOutcome } from './ledger.js';

/**
 * A hold run in a transaction of its own (the Ledger's `hold`, sqlite.ts and postgres.ts) changes
 * nothing when refused: the refusal is thrown inside the transaction, which rolls it back (a key's
 * budget counted before a short wallet with it), and answered as the outcome outside.
 */
class HoldRefused extends Error {
  constructor(readonly outcome: HoldOutcome) {
    super(`hold refused: ${outcome}`);
  }
}

/** Inside the transaction: 'held' passes, a refusal throws so that the transaction rolls back. */
export function heldOrRollBack(outcome: HoldOutcome): HoldOutcome {
  if (outcome !== 'held') throw new HoldRefused(outcome);
  return outcome;
}

/** Around the transaction: its outcome, a refusal's included; any other error goes on. */
export async function holdOutcome(transaction: Promise<HoldOutcome>): Promise<HoldOutcome> {
  try {
    return await transaction;
  } catch (error) {
    if (error instanceof HoldRefused) return error.outcome;
    throw error;
  }
}
