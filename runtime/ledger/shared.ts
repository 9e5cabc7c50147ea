import type { Ledger } from './ledger.js';
import { addGrant, addPurchase, openWallet } from './credits.js';
import { keySpendUsed, keySpendUsedPrepared } from './key-spend.js';
import { forgiveDebt, restoreDispute, reverseCredits } from './reversals.js';
import {
  hasWallet,
  lowBalanceWatch,
  owedCredits,
  purchasedCredits,
  totalHeldCredits,
  walletOf,
  walletsOf,
} from './wallets.js';

/**
 * The part of the Ledger whose statements are the same on both engines (Kysely, or one prepared
 * text): credits in, reversals, reads. sqlite.ts and postgres.ts add the hold, its settlement and
 * release, and the wallet's lock, each in its engine's own statements.
 */
export const sharedLedger = {
  openWallet,
  purchase: addPurchase,
  grant: addGrant,
  reverse: reverseCredits,
  restoreDispute,
  forgiveDebt,
  balance: walletOf,
  balances: walletsOf,
  hasWallet,
  owed: owedCredits,
  purchased: purchasedCredits,
  totalHeld: totalHeldCredits,
  lowBalanceWatch,
  keySpendUsed,
  keySpendUsedPrepared,
} satisfies Omit<Ledger, 'engine' | 'hold' | 'settle' | 'release' | 'lockWallet'>;
