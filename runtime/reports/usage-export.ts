import type { BilledTask } from '../tasks/billed-tasks.js';
import { csvLine } from './csv.js';

/**
 * The operator's export of every account's billed usage for a period (`mediaforge usage export`,
 * docs/statements.md "The usage export"): one row per charged task, read page by page on
 * (finished_at, id) so a year of a busy service streams in bounded memory. Two layouts:
 * - `csv`: task, account, key, model, when it finished, billed seconds, credits;
 * - `focus`: the FinOps FOCUS 1.0 columns, costs in the operator's currency at a declared value per
 *   credit (integer arithmetic: the value is read as millionths of the currency unit).
 */
export const CSV_COLUMNS = ['task_id', 'account_id', 'key_id', 'model', 'finished_at', 'billed_seconds', 'credits'];

export function csvRow(task: BilledTask): string {
  return csvLine([
    task.id,
    task.account_id,
    task.api_key_id,
    task.model,
    new Date(task.finished_at).toISOString(),
    task.billed_seconds ?? '',
    task.charged_credits,
  ]);
}

/** What a FOCUS export needs beyond the rows: the currency and what one credit is worth in it. */
export interface FocusTerms {
  /** ISO 4217 code. */
  currency: string;
  /** One credit's value in millionths of the currency unit. */
  creditValueMicros: bigint;
  /** The operator's name: ProviderName, PublisherName, InvoiceIssuerName. */
  providerName: string;
}

/** The FOCUS 1.0 columns, in the specification's order, then this export's own (x_ prefixed, as FOCUS allows). */
export const FOCUS_COLUMNS = [
  'AvailabilityZone',
  'BilledCost',
  'BillingAccountId',
  'BillingAccountName',
  'BillingCurrency',
  'BillingPeriodEnd',
  'BillingPeriodStart',
  'ChargeCategory',
  'ChargeClass',
  'ChargeDescription',
  'ChargeFrequency',
  'ChargePeriodEnd',
  'ChargePeriodStart',
  'CommitmentDiscountCategory',
  'CommitmentDiscountId',
  'CommitmentDiscountName',
  'CommitmentDiscountStatus',
  'CommitmentDiscountType',
  'ConsumedQuantity',
  'ConsumedUnit',
  'ContractedCost',
  'ContractedUnitPrice',
  'EffectiveCost',
  'InvoiceIssuerName',
  'ListCost',
  'ListUnitPrice',
  'PricingCategory',
  'PricingQuantity',
  'PricingUnit',
  'ProviderName',
  'PublisherName',
  'RegionId',
  'RegionName',
  'ResourceId',
  'ResourceName',
  'ResourceType',
  'ServiceCategory',
  'ServiceName',
  'SkuId',
  'SkuPriceId',
  'SubAccountId',
  'SubAccountName',
  'Tags',
  'x_Credits',
] as const;

/** `micros` millionths as a decimal string, trailing zeros dropped ("1.5", "0.000001", "12"). */
export function decimalOfMicros(micros: bigint): string {
  const sign = micros < 0n ? '-' : '';
  const abs = micros < 0n ? -micros : micros;
  const whole = abs / 1_000_000n;
  const fraction = (abs % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return `${sign}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** A decimal amount with at most six fractional digits as millionths; undefined when it is not one. */
export function microsOfDecimal(text: string): bigint | undefined {
  const match = /^(\d+)(?:\.(\d{1,6}))?$/.exec(text);
  if (!match) return undefined;
  return BigInt(match[1]!) * 1_000_000n + BigInt((match[2] ?? '').padEnd(6, '0') || '0');
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The calendar month (UTC) holding `ms`: [start, end). */
function monthOf(ms: number): { start: number; end: number } {
  const d = new Date(ms);
  return {
    start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1),
    end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1),
  };
}

export function focusRow(task: BilledTask, terms: FocusTerms): string {
  const cost = decimalOfMicros(BigInt(task.charged_credits) * terms.creditValueMicros);
  const period = monthOf(task.finished_at);
  const seconds = task.billed_seconds ?? '';
  const values: Record<(typeof FOCUS_COLUMNS)[number], string | number> = {
    AvailabilityZone: '',
    BilledCost: cost,
    BillingAccountId: task.account_id,
    BillingAccountName: '',
    BillingCurrency: terms.currency,
    BillingPeriodEnd: iso(period.end),
    BillingPeriodStart: iso(period.start),
    ChargeCategory: 'Usage',
    ChargeClass: '',
    ChargeDescription: `${task.model}: ${seconds === '' ? 'one generation' : `${seconds} s of video`}`,
    ChargeFrequency: 'Usage-Based',
    ChargePeriodEnd: iso(task.finished_at),
    ChargePeriodStart: iso(task.started_at ?? task.created_at),
    CommitmentDiscountCategory: '',
    CommitmentDiscountId: '',
    CommitmentDiscountName: '',
    CommitmentDiscountStatus: '',
    CommitmentDiscountType: '',
    ConsumedQuantity: seconds,
    ConsumedUnit: 'Seconds',
    ContractedCost: cost,
    ContractedUnitPrice: '',
    EffectiveCost: cost,
    InvoiceIssuerName: terms.providerName,
    ListCost: cost,
    ListUnitPrice: '',
    PricingCategory: 'Standard',
    PricingQuantity: seconds,
    PricingUnit: 'Seconds',
    ProviderName: terms.providerName,
    PublisherName: terms.providerName,
    RegionId: '',
    RegionName: '',
    ResourceId: task.id,
    ResourceName: '',
    ResourceType: 'Video generation task',
    ServiceCategory: 'AI and Machine Learning',
    ServiceName: 'Video generation',
    SkuId: task.model,
    SkuPriceId: '',
    SubAccountId: task.account_id,
    SubAccountName: '',
    Tags: '',
    x_Credits: task.charged_credits,
  };
  return csvLine(FOCUS_COLUMNS.map((column) => values[column]));
}
