/*
 * Money is integers: credits (1 credit = 0.01 USD), rates in hundredths of a credit per second,
 * charges rounded up with integer arithmetic; USD strings are derived from credits.
 */

/** ceil(a / b) for non-negative safe integers, without floating point. */
export function ceilDiv(a: number, b: number): number {
  const q = (a - (a % b)) / b;
  return a % b === 0 ? q : q + 1;
}

/** Whole credits for a rate in hundredths of a credit per second, over whole seconds, rounded up. */
export function chargeCredits(rateHundredths: number, seconds: number): number {
  return ceilDiv(rateHundredths * seconds, 100);
}

/** 1 credit = 0.01 USD: 1234 credits -> "12.34". */
export function creditsToUsd(credits: number): string {
  const sign = credits < 0 ? '-' : '';
  const abs = Math.abs(credits);
  return `${sign}${(abs - (abs % 100)) / 100}.${String(abs % 100).padStart(2, '0')}`;
}

/** "12.34" -> 1234 credits; undefined when the text is not a USD amount with at most two places. */
export function usdToCredits(text: string): number | undefined {
  const match = /^(0|[1-9]\d{0,12})(?:\.(\d{1,2}))?$/.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
}
