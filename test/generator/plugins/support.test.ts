import { describe, expect, it } from 'vitest';
import { ceilDiv, chargeCredits, creditsToUsd, fieldPath, usdToCredits } from '../../../generated/support.js';

describe('integer money', () => {
  it.each([
    ['exact', { given: [555, 5], want: 28 }],
    ['rounds up a fraction of a credit', { given: [165, 5], want: 9 }],
    ['whole rate', { given: [2100, 5], want: 105 }],
    ['zero seconds', { given: [999, 0], want: 0 }],
    ['large but safe', { given: [11670, 3600], want: 420120 }],
  ] as const)('chargeCredits %s', (_name, { given, want }) => {
    expect(chargeCredits(given[0], given[1])).toBe(want);
  });

  it.each([
    [0, '0.00'],
    [7, '0.07'],
    [28, '0.28'],
    [1234, '12.34'],
    [100000, '1000.00'],
  ] as const)('creditsToUsd(%i) = %s and back', (credits, usd) => {
    expect(creditsToUsd(credits)).toBe(usd);
    expect(usdToCredits(usd)).toBe(credits);
  });

  it.each(['', '1.234', '-1.00', '1e3', '01.00', 'abc', '1.'])('usdToCredits rejects %j', (text) => {
    expect(usdToCredits(text)).toBeUndefined();
  });

  it('ceilDiv never goes through a fraction', () => {
    expect(ceilDiv(10, 3)).toBe(4);
    expect(ceilDiv(9, 3)).toBe(3);
  });

  it('field paths are dotted with bracketed indexes', () => {
    expect(fieldPath('/loras/0/scale')).toBe('input.loras[0].scale');
    expect(fieldPath('', 'prompt')).toBe('input.prompt');
  });
});
