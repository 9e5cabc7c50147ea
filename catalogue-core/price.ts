/*
 * Billable seconds and the price of a request: a model's billing configuration and the rate its
 * table gives (generated/prices.ts) in, integer credits out (estimated and the most it can cost).
 */
import { countItems } from './json-values.js';
import { ceilDiv, chargeCredits } from './money.js';

export interface BillingConfig {
  durationField?: string;
  /** The duration value that lets the model choose, held at maxDuration, estimated at defaultDuration. */
  auto?: number;
  maxDuration?: number;
  defaultDuration?: number;
  referenceClips?: {
    field: string;
    maxTotalSeconds: number;
    perClipMinimumSeconds?: number;
    holdAssumesSeconds: number;
  };
  /**
   * A supplied clip the model works on. `joined`: the output is the clip then a new segment of the
   * duration field, and the clip's seconds count only with billSourceSeconds; `clip-length`: the
   * output runs as long as the clip, so the clip's length is the billable duration.
   */
  sourceClip?: { field: string; output: 'joined' | 'clip-length'; billSourceSeconds?: boolean; assumedSeconds: number };
}

/** What is known beyond the request: measured output length (at settlement), reference clip lengths. */
export interface PriceFacts {
  outputSeconds?: number;
  /** One entry per reference clip, in order; null where the length is not known. */
  referenceClipSeconds?: readonly (number | null)[];
  /** Length of the supplied source clip (sourceClip.field), when known: a task's output, or measured. */
  sourceClipSeconds?: number;
}

export interface PriceResult {
  rate: string;
  rateHundredths: number;
  options: Record<string, string | number | boolean>;
  billableSeconds: number;
  maxBillableSeconds: number;
  estimatedCredits: number;
  maxCredits: number;
}

function referenceSeconds(input: Record<string, unknown>, config: BillingConfig, facts: PriceFacts): number {
  const clips = config.referenceClips;
  if (!clips) return 0;
  const count = countItems(input[clips.field]);
  if (count === 0) return 0;
  const lengths = facts.referenceClipSeconds;
  const known = lengths !== undefined && lengths.length === count && lengths.every((l) => typeof l === 'number');
  if (!known) return Math.min(clips.maxTotalSeconds, clips.holdAssumesSeconds);
  let total = 0;
  for (const length of lengths as number[]) total += Math.max(clips.perClipMinimumSeconds ?? 0, Math.ceil(length));
  return Math.min(clips.maxTotalSeconds, total);
}

/** Whole seconds of a length in seconds, rounded up; lengths are measured to the millisecond. */
const wholeSeconds = (seconds: number) => ceilDiv(Math.max(0, Math.round(seconds * 1000)), 1000);

/** The source clip's billable seconds: its known length, or the assumed one. */
function sourceSeconds(config: BillingConfig, facts: PriceFacts): number {
  const known = facts.sourceClipSeconds;
  return known !== undefined ? wholeSeconds(known) : config.sourceClip!.assumedSeconds;
}

export function computePrice(
  input: Record<string, unknown>,
  facts: PriceFacts,
  config: BillingConfig,
  rate: readonly [number, string],
  options: Record<string, string | number | boolean>,
): PriceResult {
  let estimated = 0;
  let max = 0;
  if (config.durationField !== undefined) {
    const requested = input[config.durationField] as number;
    if (config.auto !== undefined && requested === config.auto) {
      estimated = config.defaultDuration ?? config.maxDuration ?? 0;
      max = config.maxDuration ?? estimated;
    } else {
      estimated = requested;
      max = requested;
    }
  }
  const clip = config.sourceClip;
  // The clip's own seconds: the whole output of clip-length, a billed part of joined.
  const clipSeconds =
    clip && (clip.output === 'clip-length' || clip.billSourceSeconds) ? sourceSeconds(config, facts) : 0;
  estimated += clipSeconds;
  max += clipSeconds;
  if (facts.outputSeconds !== undefined) {
    if (clip?.output === 'joined' && !clip.billSourceSeconds) {
      // The joined file holds the clip, which is not billed: the new segment is the rest.
      if (facts.sourceClipSeconds !== undefined)
        estimated = wholeSeconds(facts.outputSeconds - facts.sourceClipSeconds);
    } else estimated = Math.ceil(facts.outputSeconds);
  }
  const references = referenceSeconds(input, config, facts);
  const billableSeconds = estimated + references;
  const maxBillableSeconds = Math.max(max, estimated) + references;
  return {
    rate: rate[1],
    rateHundredths: rate[0],
    options,
    billableSeconds,
    maxBillableSeconds,
    estimatedCredits: chargeCredits(rate[0], billableSeconds),
    maxCredits: chargeCredits(rate[0], maxBillableSeconds),
  };
}
