import type { Plugin } from '../../plugin.js';
import { readYaml, type YamlSource } from '../../load/read-yaml.js';
import { printModule } from '../../print/module.js';
import { SpecError, type SpecProblem } from '../../load/spec-error.js';

const FILE = 'spec/credit-packs.yaml';
const PACK_KEYS = ['name', 'credits', 'bonus', 'price', 'currency'];
const CUSTOM_KEYS = ['minCredits', 'maxCredits', 'creditsPerMinorUnit', 'currency'];
/** Stripe's Checkout takes amounts up to 8 digits in minor units (99,999,999). */
const MAX_MINOR_UNITS = 99_999_999;

export interface CreditPackSpec {
  name: string;
  credits: number;
  bonus: number;
  price: number;
  currency: string;
}

export interface CustomAmountSpec {
  minCredits: number;
  maxCredits: number;
  creditsPerMinorUnit: number;
  currency: string;
}

export interface CreditPacksSpec {
  packs: CreditPackSpec[];
  custom: CustomAmountSpec | null;
}

const isMap = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function wholeNumber(
  source: YamlSource,
  found: SpecProblem[],
  path: (string | number)[],
  value: unknown,
  min: number,
  what: string,
): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    found.push(source.problem(path, `${what} must be a whole number >= ${min} (money is never a decimal)`));
    return 0;
  }
  return value;
}

function currencyOf(source: YamlSource, found: SpecProblem[], path: (string | number)[], value: unknown): string {
  if (typeof value !== 'string' || !/^[a-z]{3}$/.test(value)) {
    found.push(source.problem(path, 'currency must be an ISO 4217 code in lowercase (usd, eur, ...)'));
    return '';
  }
  return value;
}

/** Reads and checks spec/credit-packs.yaml under `root`; every problem is reported as file:line:col. */
export function loadCreditPacks(root: string): CreditPacksSpec {
  const { source, problems } = readYaml(root, FILE);
  if (!source) throw new SpecError(problems);
  const found: SpecProblem[] = [...problems];
  const data = source.data;
  if (!isMap(data)) throw new SpecError([source.problem([], 'the file must be a map with packs (and custom)')]);
  for (const key of Object.keys(data))
    if (key !== 'packs' && key !== 'custom') found.push(source.problem([key], `unknown key "${key}"`));
  const packs: CreditPackSpec[] = [];
  if (!Array.isArray(data.packs) || data.packs.length === 0)
    found.push(source.problem(['packs'], 'packs must be a non-empty list'));
  else {
    const names = new Set<string>();
    data.packs.forEach((pack: unknown, index) => {
      const at = (key?: string) => (key === undefined ? ['packs', index] : ['packs', index, key]);
      if (!isMap(pack)) {
        found.push(source.problem(at(), 'a pack must be a map (name, credits, price, currency, bonus)'));
        return;
      }
      for (const key of Object.keys(pack))
        if (!PACK_KEYS.includes(key)) found.push(source.problem(at(key), `unknown key "${key}"`));
      const name = pack.name;
      if (typeof name !== 'string' || !/^[a-z][a-z0-9-]{0,31}$/.test(name) || name === 'custom')
        found.push(source.problem(at('name'), 'name must be a lowercase word (a-z, 0-9, -), not "custom"'));
      else if (names.has(name)) found.push(source.problem(at('name'), `pack "${name}" is listed twice`));
      else names.add(name);
      const hasCredits = pack.credits !== undefined;
      if (!hasCredits) found.push(source.problem(at(), 'a pack needs credits'));
      const credits = hasCredits ? wholeNumber(source, found, at('credits'), pack.credits, 1, 'credits') : 0;
      let bonus = 0;
      if (pack.bonus !== undefined) {
        if (!hasCredits) found.push(source.problem(at('bonus'), 'a bonus needs credits it is on top of'));
        else bonus = wholeNumber(source, found, at('bonus'), pack.bonus, 0, 'bonus');
      }
      if (pack.price === undefined)
        found.push(source.problem(at(), 'a pack needs a price (minor units of its currency)'));
      const price = pack.price === undefined ? 0 : wholeNumber(source, found, at('price'), pack.price, 1, 'price');
      if (price > MAX_MINOR_UNITS)
        found.push(source.problem(at('price'), `price must be at most ${MAX_MINOR_UNITS} minor units`));
      const currency = currencyOf(source, found, at('currency'), pack.currency);
      packs.push({ name: String(name), credits, bonus, price, currency });
    });
  }
  let custom: CustomAmountSpec | null = null;
  if (data.custom !== undefined) {
    const raw = data.custom;
    if (!isMap(raw)) found.push(source.problem(['custom'], `custom must be a map (${CUSTOM_KEYS.join(', ')})`));
    else {
      for (const key of Object.keys(raw))
        if (!CUSTOM_KEYS.includes(key)) found.push(source.problem(['custom', key], `unknown key "${key}"`));
      const minCredits = wholeNumber(source, found, ['custom', 'minCredits'], raw.minCredits, 1, 'minCredits');
      const maxCredits = wholeNumber(source, found, ['custom', 'maxCredits'], raw.maxCredits, 1, 'maxCredits');
      const rate = wholeNumber(
        source,
        found,
        ['custom', 'creditsPerMinorUnit'],
        raw.creditsPerMinorUnit,
        1,
        'creditsPerMinorUnit',
      );
      const currency = currencyOf(source, found, ['custom', 'currency'], raw.currency);
      if (minCredits && maxCredits && minCredits > maxCredits)
        found.push(source.problem(['custom', 'maxCredits'], 'maxCredits must not be below minCredits'));
      if (rate && minCredits && minCredits % rate !== 0)
        found.push(source.problem(['custom', 'minCredits'], 'minCredits must be a multiple of creditsPerMinorUnit'));
      if (rate && maxCredits && maxCredits % rate !== 0)
        found.push(source.problem(['custom', 'maxCredits'], 'maxCredits must be a multiple of creditsPerMinorUnit'));
      if (rate && maxCredits && maxCredits / rate > MAX_MINOR_UNITS)
        found.push(
          source.problem(['custom', 'maxCredits'], `maxCredits costs more than ${MAX_MINOR_UNITS} minor units`),
        );
      custom = { minCredits, maxCredits, creditsPerMinorUnit: rate, currency };
    }
  }
  if (found.length) throw new SpecError(found);
  return { packs, custom };
}

/** Money in minor units as text, for the docs page (integer arithmetic: no floating point). */
export function formatMinor(amount: number, currency: string): string {
  const whole = Math.floor(amount / 100);
  const cents = String(amount % 100).padStart(2, '0');
  return `${whole.toLocaleString('en-US')}.${cents} ${currency.toUpperCase()}`;
}

function docsPage(spec: CreditPacksSpec): string {
  const rows = spec.packs.map(
    (pack) =>
      `| ${pack.name} | ${pack.credits.toLocaleString('en-US')} | ${pack.bonus.toLocaleString('en-US')} | ${formatMinor(pack.price, pack.currency)} |`,
  );
  const custom = spec.custom
    ? `\nA custom amount: from ${spec.custom.minCredits.toLocaleString('en-US')} to ${spec.custom.maxCredits.toLocaleString('en-US')} credits, ${spec.custom.creditsPerMinorUnit} credit(s) per minor unit of ${spec.custom.currency.toUpperCase()}.\n`
    : '\nNo custom amount is sold.\n';
  return [
    '# Credit packs',
    '',
    'What a customer can buy from the console (spec/credit-packs.yaml). 1 credit = 0.01 USD of generation;',
    'credits and bonus are credited together once the payment is confirmed.',
    '',
    '| Pack | Credits | Bonus | Price |',
    '| --- | ---: | ---: | ---: |',
    ...rows,
    custom,
  ].join('\n');
}

/** generated/credit-packs.ts and generated/docs/credit-packs.md (code: ./template.ts). */
export const creditPacksPlugin: Plugin = {
  name: 'credit-packs',
  emit: ({ catalogue }) => {
    const spec = loadCreditPacks(catalogue.root);
    return [
      {
        path: 'credit-packs.ts',
        inputs: [FILE],
        contents: printModule({
          template: new URL('./template.ts', import.meta.url),
          values: { CREDIT_PACKS: spec.packs, CUSTOM_AMOUNT: spec.custom },
        }),
      },
      { path: 'docs/credit-packs.md', inputs: [FILE], contents: docsPage(spec) },
    ];
  },
};
