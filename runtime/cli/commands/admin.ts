/** The account, key, credit and migration commands (runtime/cli/commands.ts lists their flags). */
import { LANGUAGES, type Language } from '../../../generated/errors.js';
import { createAccount } from '../../accounts/accounts.js';
import { ledgerFor } from '../../ledger/ledger-for.js';
import { DEFAULT_BOOK, parsePriceBook, priceBookChoices, setAccountPriceBook } from '../../accounts/price-book.js';
import {
  applyPolicyInput,
  type KeyPolicy,
  type KeyPolicyInput,
  KeyPolicyInputError,
  NO_POLICY,
  policyView,
} from '../../accounts/key-policy.js';
import {
  CLI_OPERATOR,
  createKeyAsActor,
  forgiveDebtAsOperator,
  grantCredits,
  recordCliAction,
  revokeKeyAsOperator,
  setKeyPolicyAsActor,
} from '../../operator/operator-actions.js';
import { recordAudit } from '../../audit/audit-log.js';
import { setAccountReports } from '../../reports/report-scope.js';
import { migrateToLatest } from '../../storage/migrate.js';
import { setAccountWebhookSettings } from '../../webhooks/admin.js';
import { commandConfig, withCommandDb } from '../command-db.js';
import type { CommandInput } from '../commands.js';
import { printSafe } from '../terminal-text.js';
import { UsageError, wholeNumber } from '../usage-error.js';

type Values = CommandInput['values'];

function print(values: Values, value: Record<string, unknown>, text: string) {
  printSafe(Boolean(values.json), value, text);
}

const text = (value: string | boolean | undefined) => (typeof value === 'string' ? value : undefined);

/** --language checked against the languages of the generated error catalogue. */
function language(value: string | boolean | undefined): Language | undefined {
  if (value === undefined) return undefined;
  if (!(LANGUAGES as readonly unknown[]).includes(value))
    throw new UsageError(`--language must be one of ${LANGUAGES.join(', ')} (got ${String(value)})`);
  return value as Language;
}

export async function migrate({ values }: CommandInput): Promise<number> {
  const { applied } = await withCommandDb(commandConfig(values), (db) => migrateToLatest(db), { migrate: false });
  print(values, { applied }, applied.length ? `applied: ${applied.join(', ')}` : 'already up to date');
  return 0;
}

export async function accountsCreate({ values }: CommandInput): Promise<number> {
  const credits = wholeNumber(text(values.credits) ?? '0', 'credits');
  const lang = language(values.language) ?? null;
  const created = await withCommandDb(commandConfig(values), async (db) => {
    const now = Date.now();
    const account = await createAccount(db, { credits, language: lang, now });
    await recordCliAction(db, 'account.create', account.accountId, { credits, language: lang }, now);
    return account;
  });
  print(
    values,
    { ...created },
    `account ${created.accountId}\napi key ${created.apiKey}\nwebhook secret ${created.webhookSecret}\n(the key and the secret are shown once)`,
  );
  return 0;
}

export async function accountsSet({ values }: CommandInput): Promise<number> {
  const accountId = text(values.account)!;
  const lang = language(values.language);
  const payloadVersion =
    values['payload-version'] === undefined
      ? undefined
      : wholeNumber(text(values['payload-version']), 'payload-version', 1);
  if (payloadVersion !== undefined && payloadVersion !== 1 && payloadVersion !== 2)
    throw new UsageError('--payload-version must be 1 or 2');
  const low = text(values['low-balance']);
  // `off` clears the threshold; a number is credits of available balance.
  const lowBalanceCredits = low === undefined ? undefined : low === 'off' ? null : wholeNumber(low, 'low-balance', 1);
  const bookName = text(values['price-book']);
  const book = bookName === undefined ? undefined : parsePriceBook(bookName);
  if (bookName !== undefined && book === undefined)
    throw new UsageError(`--price-book: no book "${bookName}"; one of: ${priceBookChoices().join(', ')}`);
  const settings = lang !== undefined || payloadVersion !== undefined || lowBalanceCredits !== undefined;
  await withCommandDb(commandConfig(values), async (db) => {
    if (book !== undefined) {
      const changed = await setAccountPriceBook(db, CLI_OPERATOR, accountId, book, Date.now());
      if (!changed) throw new UsageError(`no account ${accountId}`);
    }
    // The book's change has its own audit row (account.price_book); the rest is account.set.
    if (!settings && book !== undefined) return;
    await setAccountWebhookSettings(db, accountId, { language: lang, payloadVersion, lowBalanceCredits });
    await recordCliAction(
      db,
      'account.set',
      accountId,
      {
        ...(lang !== undefined ? { language: lang } : {}),
        ...(payloadVersion !== undefined ? { payloadVersion } : {}),
        ...(lowBalanceCredits !== undefined ? { lowBalanceCredits } : {}),
      },
      Date.now(),
    );
  });
  print(
    values,
    {
      accountId,
      ...(lang !== undefined ? { language: lang } : {}),
      ...(payloadVersion !== undefined ? { payloadVersion } : {}),
      ...(lowBalanceCredits !== undefined ? { lowBalanceCredits } : {}),
      ...(book !== undefined ? { priceBook: book ?? DEFAULT_BOOK } : {}),
    },
    `updated ${accountId}`,
  );
  return 0;
}

export async function keysCreate({ values }: CommandInput): Promise<number> {
  const accountId = text(values.account)!;
  const workspace = text(values.workspace) ?? 'personal';
  const policy = policyFlags(values);
  const { apiKey, keyId } = await withCommandDb(commandConfig(values), async (db) => {
    const now = Date.now();
    // The key and its audit row (actor cli) in one transaction, as the console makes a key with a policy.
    return createKeyAsActor(db, CLI_OPERATOR, { accountId, workspace, policy }, now);
  });
  print(values, { apiKey, keyId }, `api key ${apiKey} (${keyId}); shown once`);
  return 0;
}

/** The policy flags of `keys create` and `keys set` as a policy input (`none` clears a part). */
function policyInput(values: Values): KeyPolicyInput {
  const flag = (name: string) => {
    const value = text(values[name]);
    return value === undefined ? undefined : value.trim() === 'none' ? null : value;
  };
  const list = (value: string | null | undefined) =>
    value === undefined || value === null
      ? value
      : value
          .split(',')
          .map((part) => part.trim())
          .filter(Boolean);
  const maxTasksInFlight = flag('max-in-flight');
  return {
    ...(flag('budget') !== undefined ? { budget: flag('budget') } : {}),
    ...(flag('budget-alerts') !== undefined
      ? {
          budgetAlerts:
            list(flag('budget-alerts'))?.map((p) => wholeNumber(p.replace(/%$/, ''), 'budget-alerts', 1)) ?? null,
        }
      : {}),
    ...(flag('models') !== undefined ? { models: list(flag('models')) } : {}),
    ...(maxTasksInFlight !== undefined
      ? { maxTasksInFlight: maxTasksInFlight === null ? null : wholeNumber(maxTasksInFlight, 'max-in-flight', 1) }
      : {}),
    ...(flag('expires') !== undefined ? { expires: flag('expires') } : {}),
    ...(flag('networks') !== undefined ? { networks: list(flag('networks')) } : {}),
  };
}

function policyFlags(values: Values, current: KeyPolicy = NO_POLICY): KeyPolicy {
  try {
    return applyPolicyInput(current, policyInput(values), Date.now());
  } catch (error) {
    if (error instanceof KeyPolicyInputError) throw new UsageError(`--${flagOf(error.field)}: ${error.reason}`);
    throw error;
  }
}

const flagOf = (field: string) =>
  field === 'maxTasksInFlight' ? 'max-in-flight' : field === 'budgetAlerts' ? 'budget-alerts' : field;

export async function keysSet({ values }: CommandInput): Promise<number> {
  const keyId = text(values.key)!;
  const input = policyInput(values);
  // A bad flag is a usage error before the database is opened; whether the key has a budget for
  // --budget-alerts is known once its row is read (setKeyPolicyAsActor).
  policyFlags(values, { ...NO_POLICY, budget: { credits: 1, period: 'lifetime' } });
  const policy = await withCommandDb(commandConfig(values), (db) =>
    setKeyPolicyAsActor(db, CLI_OPERATOR, keyId, input, Date.now()),
  );
  if (!policy) throw new Error(`no key ${keyId}`);
  const view = policyView(policy);
  print(values, { keyId, policy: view }, `policy of ${keyId}: ${JSON.stringify(view)}`);
  return 0;
}

export async function keysRevoke({ values }: CommandInput): Promise<number> {
  // Recorded in the audit log as the console's revocations are (actor `cli`).
  const revoked =
    (await withCommandDb(commandConfig(values), (db) =>
      revokeKeyAsOperator(db, CLI_OPERATOR, text(values.key)!, Date.now()),
    )) === true;
  print(values, { revoked }, revoked ? 'revoked' : 'no such active key');
  return revoked ? 0 : 1;
}

/** Turns a key's account-reports scope on or off (statements, account-wide usage); audited with the change. */
export async function keysScope({ values }: CommandInput): Promise<number> {
  const keyId = text(values.key)!;
  const value = text(values['account-reports'])!.trim();
  if (value !== 'on' && value !== 'off') throw new UsageError('--account-reports: on or off');
  const on = value === 'on';
  const found = await withCommandDb(commandConfig(values), (db) =>
    db.kysely.transaction().execute(async (trx) => {
      if (!(await setAccountReports(trx, keyId, on))) return false;
      await recordAudit(
        trx,
        {
          actor: CLI_OPERATOR.actor,
          action: 'key.scope',
          target: keyId,
          clientAddress: CLI_OPERATOR.clientAddress,
          details: { accountReports: on },
        },
        Date.now(),
      );
      return true;
    }),
  );
  if (!found) throw new Error(`no key ${keyId}`);
  print(values, { keyId, accountReports: on }, `account reports of ${keyId}: ${value}`);
  return 0;
}

/** Forgives everything an account owes (`debt_forgiven`), audited; with --idempotency-key a second run forgives nothing more. */
export async function accountsForgiveDebt({ values }: CommandInput): Promise<number> {
  const accountId = text(values.account)!;
  const note = text(values.note)?.trim() || null;
  const idempotencyKey = text(values['idempotency-key']) ?? null;
  const done = await withCommandDb(commandConfig(values), (db) =>
    forgiveDebtAsOperator(db, ledgerFor(db), CLI_OPERATOR, { accountId, note, idempotencyKey }, Date.now()),
  );
  if (!done) throw new Error(`no account ${accountId}`);
  print(
    values,
    { accountId, forgiven: done.forgiven, replayed: done.replayed },
    done.replayed
      ? `already forgiven with this idempotency key (nothing changed)`
      : done.forgiven === 0
        ? `${accountId} owes nothing (nothing changed)`
        : `forgave ${done.forgiven} credits owed by ${accountId}`,
  );
  return 0;
}

export async function creditsAdd({ values }: CommandInput): Promise<number> {
  const accountId = text(values.account)!;
  const credits = wholeNumber(text(values.credits), 'credits', 1);
  const note = text(values.note)?.trim() || null;
  // Recorded in the audit log as the console's grants are (actor `cli`), the note on the ledger row.
  const idempotencyKey = text(values['idempotency-key']) ?? null;
  const granted = await withCommandDb(commandConfig(values), (db) =>
    grantCredits(db, ledgerFor(db), CLI_OPERATOR, { accountId, credits, note, idempotencyKey }, Date.now()),
  );
  if (!granted) throw new Error(`no account ${accountId}`);
  print(
    values,
    { accountId, added: granted.added, replayed: granted.replayed },
    granted.replayed
      ? `already added: ${granted.added} credits to ${accountId} with this idempotency key (nothing changed)`
      : `added ${credits} credits to ${accountId}`,
  );
  return 0;
}
