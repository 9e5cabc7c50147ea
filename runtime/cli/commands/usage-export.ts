import { once } from 'node:events';
import { recordAudit } from '../../audit/audit-log.js';
import { CLI_OPERATOR } from '../../operator/operator-actions.js';
import {
  CSV_COLUMNS,
  csvRow,
  FOCUS_COLUMNS,
  focusRow,
  microsOfDecimal,
  type FocusTerms,
} from '../../reports/usage-export.js';
import { csvLine } from '../../reports/csv.js';
import { billedTasks } from '../../tasks/billed-tasks.js';
import { commandConfig, withCommandDb } from '../command-db.js';
import type { CommandInput } from '../commands.js';
import { UsageError } from '../usage-error.js';

/** A `YYYY-MM-DD` day's start in UTC milliseconds. */
function dayStart(value: string | boolean | undefined, flag: string): number {
  const text = typeof value === 'string' ? value.trim() : '';
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  const ms = match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) : Number.NaN;
  if (!match || new Date(ms).toISOString().slice(0, 10) !== text)
    throw new UsageError(`--${flag} must be a day as YYYY-MM-DD (UTC), not ${JSON.stringify(text)}`);
  return ms;
}

function focusTerms(values: CommandInput['values']): FocusTerms {
  const currency = typeof values.currency === 'string' ? values.currency.trim() : '';
  if (!/^[A-Z]{3}$/.test(currency))
    throw new UsageError('--format focus needs --currency, an ISO 4217 code such as USD (FOCUS BillingCurrency)');
  const value = typeof values['credit-value'] === 'string' ? values['credit-value'].trim() : '';
  const creditValueMicros = microsOfDecimal(value);
  if (creditValueMicros === undefined)
    throw new UsageError(
      '--format focus needs --credit-value, what one credit is worth in the currency (a decimal with at most 6 places, e.g. 0.01)',
    );
  const name = typeof values['provider-name'] === 'string' ? values['provider-name'].trim() : '';
  return { currency, creditValueMicros, providerName: name || 'mediaforge' };
}

async function write(text: string): Promise<void> {
  if (!process.stdout.write(text)) await once(process.stdout, 'drain');
}

/**
 * `mediaforge usage export`: every account's charged tasks that finished from the first day to the
 * last (both whole UTC days), as CSV or FOCUS on stdout, page by page; audited with its period,
 * layout and row count once written.
 */
export async function usageExport({ values }: CommandInput): Promise<number> {
  const from = dayStart(values.from, 'from');
  const to = dayStart(values.to, 'to') + 86_400_000;
  if (to <= from) throw new UsageError('--to must be the same day as --from or later');
  const format = typeof values.format === 'string' ? values.format : 'csv';
  if (format !== 'csv' && format !== 'focus') throw new UsageError('--format must be csv or focus');
  const terms = format === 'focus' ? focusTerms(values) : undefined;
  await withCommandDb(commandConfig(values), async (db) => {
    await write(csvLine(terms ? [...FOCUS_COLUMNS] : CSV_COLUMNS));
    let rows = 0;
    for await (const page of billedTasks(db.kysely, from, to)) {
      await write(page.map((task) => (terms ? focusRow(task, terms) : csvRow(task))).join(''));
      rows += page.length;
    }
    await db.kysely.transaction().execute((trx) =>
      recordAudit(
        trx,
        {
          actor: CLI_OPERATOR.actor,
          action: 'usage.export',
          target: null,
          clientAddress: CLI_OPERATOR.clientAddress,
          details: { from: values.from, to: values.to, format, rows },
        },
        Date.now(),
      ),
    );
  });
  return 0;
}
