import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CREDIT_PACKS, CUSTOM_AMOUNT, creditPack, customPack } from '../../../generated/credit-packs.js';
import { loadCatalogue } from '../../../generator/load/catalogue.js';
import { creditPacksPlugin, loadCreditPacks } from '../../../generator/plugins/credit-packs/emit.js';
import { ROOT } from '../../support/root.js';
import { copySpec } from '../../support/spec-copy.js';

let copy: ReturnType<typeof copySpec> | undefined;
afterEach(() => copy?.remove());

const GOOD_PACK = '  - { name: small, credits: 100, price: 100, currency: usd }\n';

describe('credit-packs plugin (generated/credit-packs.ts)', () => {
  it('emits the packs and the custom amount of spec/credit-packs.yaml', () => {
    const spec = loadCreditPacks(ROOT);
    expect(CREDIT_PACKS).toEqual(spec.packs);
    expect(CUSTOM_AMOUNT).toEqual(spec.custom);
    expect(creditPack(spec.packs[0].name)).toEqual(spec.packs[0]);
    expect(creditPack('no-such-pack')).toBeUndefined();
  });

  it.each([
    ['below the minimum', { credits: CUSTOM_AMOUNT!.minCredits - 1, want: 'range' }],
    ['above the maximum', { credits: CUSTOM_AMOUNT!.maxCredits + 1, want: 'range' }],
    ['not a whole number', { credits: CUSTOM_AMOUNT!.minCredits + 0.5, want: 'range' }],
    [
      'the minimum',
      {
        credits: CUSTOM_AMOUNT!.minCredits,
        want: {
          name: 'custom',
          credits: CUSTOM_AMOUNT!.minCredits,
          bonus: 0,
          price: CUSTOM_AMOUNT!.minCredits / CUSTOM_AMOUNT!.creditsPerMinorUnit,
          currency: CUSTOM_AMOUNT!.currency,
        },
      },
    ],
  ])('a custom amount %s', (_name, { credits, want }) => {
    expect(customPack(credits)).toEqual(want);
  });

  it('follows an edited spec file, and writes the docs page', async () => {
    copy = copySpec();
    writeFileSync(
      join(copy.root, 'spec/credit-packs.yaml'),
      'packs:\n  - { name: tiny, credits: 42, bonus: 8, price: 4200, currency: eur }\ncustom: { minCredits: 10, maxCredits: 40, creditsPerMinorUnit: 2, currency: eur }\n',
    );
    const files = await creditPacksPlugin.emit({ catalogue: loadCatalogue(copy.root), emitted: new Map() });
    const module = files.find((f) => f.path === 'credit-packs.ts')!;
    expect(module.contents).toContain("{ name: 'tiny', credits: 42, bonus: 8, price: 4200, currency: 'eur' }");
    expect(module.contents).toContain('creditsPerMinorUnit: 2');
    const page = files.find((f) => f.path === 'docs/credit-packs.md')!;
    expect(page.contents).toContain('| tiny | 42 | 8 | 42.00 EUR |');
  });

  it.each([
    [
      'an unknown key',
      {
        yaml: `packs:\n  - { name: a, credits: 1, price: 1, currency: usd, colour: red }\n`,
        want: /2:53: unknown key "colour"/,
      },
    ],
    ['an unknown top-level key', { yaml: `packs:\n${GOOD_PACK}extra: 1\n`, want: /3:1: unknown key "extra"/ }],
    [
      'a decimal price',
      {
        yaml: `packs:\n  - name: a\n    credits: 10\n    price: 9.99\n    currency: usd\n`,
        want: /4:5: price must be a whole number/,
      },
    ],
    [
      'decimal credits',
      {
        yaml: `packs:\n  - name: a\n    credits: 10.5\n    price: 999\n    currency: usd\n`,
        want: /3:5: credits must be a whole number/,
      },
    ],
    [
      'a bonus without credits',
      {
        yaml: `packs:\n  - name: a\n    bonus: 5\n    price: 999\n    currency: usd\n`,
        want: /3:5: a bonus needs credits/,
      },
    ],
    ['a duplicate name', { yaml: `packs:\n${GOOD_PACK}${GOOD_PACK}`, want: /3:\d+: pack "small" is listed twice/ }],
    [
      'a currency in capitals',
      {
        yaml: `packs:\n  - { name: a, credits: 1, price: 1, currency: USD }\n`,
        want: /2:\d+: currency must be an ISO 4217 code/,
      },
    ],
    [
      'custom min above max',
      {
        yaml: `packs:\n${GOOD_PACK}custom:\n  minCredits: 50\n  maxCredits: 10\n  creditsPerMinorUnit: 1\n  currency: usd\n`,
        want: /5:3: maxCredits must not be below minCredits/,
      },
    ],
    [
      'a custom rate of 0',
      {
        yaml: `packs:\n${GOOD_PACK}custom:\n  minCredits: 5\n  maxCredits: 10\n  creditsPerMinorUnit: 0\n  currency: usd\n`,
        want: /6:3: creditsPerMinorUnit must be a whole number >= 1/,
      },
    ],
    [
      'a custom min off the rate',
      {
        yaml: `packs:\n${GOOD_PACK}custom:\n  minCredits: 5\n  maxCredits: 10\n  creditsPerMinorUnit: 2\n  currency: usd\n`,
        want: /4:3: minCredits must be a multiple/,
      },
    ],
    [
      'a custom unknown key',
      {
        yaml: `packs:\n${GOOD_PACK}custom:\n  minCredits: 5\n  maxCredits: 10\n  creditsPerMinorUnit: 1\n  currency: usd\n  step: 3\n`,
        want: /8:3: unknown key "step"/,
      },
    ],
  ])('refuses %s at file:line:col', async (_name, { yaml, want }) => {
    copy = copySpec();
    writeFileSync(join(copy.root, 'spec/credit-packs.yaml'), yaml);
    expect(() => loadCreditPacks(copy!.root)).toThrow(new RegExp(`spec/credit-packs\\.yaml:${want.source}`));
  });
});
