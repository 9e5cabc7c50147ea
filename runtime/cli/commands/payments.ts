import { recordAudit } from '../../audit/audit-log.js';
import { ledgerFor } from '../../ledger/ledger-for.js';
import { CLI_OPERATOR } from '../../operator/operator-actions.js';
import { paymentSettings } from '../../payments/payment-settings.js';
import { Payments } from '../../payments/payments.js';
import { StripeProcessor } from '../../payments/stripe-processor.js';
import { commandConfig, withCommandDb } from '../command-db.js';
import type { CommandInput } from '../commands.js';
import { printSafe } from '../terminal-text.js';

/**
 * `mediaforge payments reconcile`: what the worker's `reconcile-payments` item does every 15
 * minutes, now: the paid Checkout Sessions of the last 48 hours this service created and did not
 * credit are credited, once (docs/payments.md "Reconciliation"). Audited with what it found.
 */
export async function paymentsReconcile({ values }: CommandInput): Promise<number> {
  const config = commandConfig(values);
  const settings = paymentSettings(config);
  if (!settings.on) throw new Error(settings.reason);
  const result = await withCommandDb(config, async (db) => {
    const now = Date.now();
    const found = await new Payments(settings, new StripeProcessor(settings), db, ledgerFor(db)).reconcile(now);
    await db.kysely.transaction().execute((trx) =>
      recordAudit(
        trx,
        {
          actor: CLI_OPERATOR.actor,
          action: 'payments.reconcile',
          target: null,
          clientAddress: CLI_OPERATOR.clientAddress,
          details: found,
        },
        now,
      ),
    );
    return found;
  });
  printSafe(
    Boolean(values.json),
    result,
    `checkout sessions of the last 48 hours: ${result.seen}; paid and credited now: ${result.credited}`,
  );
  return 0;
}
