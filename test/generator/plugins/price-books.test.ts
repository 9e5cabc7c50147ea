import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { catalogue } from '../../../generated/catalogue.js';
import { bookPercent, isPriceBook, PRICE_BOOK_NAMES, PRICE_BOOKS } from '../../../generated/price-books.js';
import { loadPriceBooks } from '../../../generator/plugins/price-books/emit.js';
import { ROOT } from '../../support/root.js';

const MODEL_IDS = [...catalogue.keys()];
const A_MODEL = MODEL_IDS.find((id) => id.startsWith('vendor_b/family_c-3.0/'))!;

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A root holding only spec/price-books/<name>.yaml with `yaml`. */
function rootWith(yaml: string, name = 'book'): string {
  dir = mkdtempSync(join(tmpdir(), 'mediaforge-books-'));
  mkdirSync(join(dir, 'spec/price-books'), { recursive: true });
  writeFileSync(join(dir, 'spec/price-books', `${name}.yaml`), yaml);
  return dir;
}

function problemOf(yaml: string, name?: string): string {
  try {
    loadPriceBooks(rootWith(yaml, name), MODEL_IDS);
  } catch (error) {
    return String(error);
  }
  return 'no problem';
}

/** Every file under `path`, recursively. */
const filesUnder = (path: string): string[] =>
  statSync(path).isDirectory() ? readdirSync(path).flatMap((name) => filesUnder(join(path, name))) : [path];

describe('price-books plugin (generated/price-books.ts)', () => {
  it('emits the books of spec/price-books/, resolved per model', () => {
    const loaded = loadPriceBooks(ROOT, MODEL_IDS);
    expect(PRICE_BOOKS).toEqual(loaded.books);
    expect(PRICE_BOOK_NAMES).toContain('partner');
    expect(isPriceBook('partner')).toBe(true);
    expect(isPriceBook('default')).toBe(false);
    expect(bookPercent(null, A_MODEL)).toBe(100);
    expect(bookPercent('no-such-book', A_MODEL)).toBe(100);
    for (const id of MODEL_IDS) expect(bookPercent('partner', id)).toBe(loaded.resolved.partner[id] ?? 80);
  });

  it('the most specific entry wins: an id, then the pattern naming more segments', () => {
    const root = rootWith(`percent: 80\nmodels:\n  vendor_b/*: 70\n  vendor_b/family_c-3.0/*: 90\n  ${A_MODEL}: 95\n`);
    const { resolved } = loadPriceBooks(root, MODEL_IDS);
    expect(resolved.book[A_MODEL]).toBe(95);
    const sibling = MODEL_IDS.find((id) => id.startsWith('vendor_b/family_c-3.0/') && id !== A_MODEL)!;
    expect(resolved.book[sibling]).toBe(90);
    const other = MODEL_IDS.find((id) => id.startsWith('vendor_b/') && !id.startsWith('vendor_b/family_c-3.0/'))!;
    expect(resolved.book[other]).toBe(70);
    expect(resolved.book[MODEL_IDS.find((id) => id.startsWith('vendor_a/'))!]).toBeUndefined();
  });

  it('books are never published: no docs page, no contract names one', () => {
    const published = [...filesUnder(join(ROOT, 'generated/docs')), join(ROOT, 'generated/openapi.json')];
    for (const name of PRICE_BOOK_NAMES)
      for (const file of published)
        expect(readFileSync(file, 'utf8')).not.toMatch(new RegExp(`price-books/${name}\\b`));
  });

  it.each([
    [
      'a decimal percent',
      { yaml: 'percent: 80.5\n', want: /book\.yaml:1:1: percent must be a whole number from 1 to 1000/ },
    ],
    ['a zero percent', { yaml: 'percent: 0\n', want: /book\.yaml:1:1: percent must be a whole number/ }],
    ['a negative percent', { yaml: 'percent: -5\n', want: /book\.yaml:1:1: percent must be a whole number/ }],
    [
      'a percent over the cap',
      { yaml: 'percent: 1001\n', want: /book\.yaml:1:1: percent must be a whole number from 1 to 1000/ },
    ],
    ['a text percent', { yaml: 'percent: "80"\n', want: /book\.yaml:1:1: percent must be a whole number/ }],
    ['no percent', { yaml: 'models: {}\n', want: /book\.yaml:1:1: a price book needs a percent/ }],
    ['an unknown key', { yaml: 'percent: 80\ncolour: red\n', want: /book\.yaml:2:1: unknown key "colour"/ }],
    [
      'a decimal model percent',
      { yaml: 'percent: 80\nmodels:\n  vendor_a/*: 85.5\n', want: /book\.yaml:3:3: percent must be a whole number/ },
    ],
    [
      'an unknown model',
      {
        yaml: 'percent: 80\nmodels:\n  vendor_a/nope/text-to-video: 90\n',
        want: /book\.yaml:3:3: unknown model "vendor_a\/nope\/text-to-video"/,
      },
    ],
    [
      'a pattern matching no model',
      {
        yaml: 'percent: 80\nmodels:\n  vendor_z/*: 90\n',
        want: /book\.yaml:3:3: the pattern "vendor_z\/\*" matches no model/,
      },
    ],
    [
      'a * inside a segment',
      {
        yaml: 'percent: 80\nmodels:\n  vendor_a/family_a*: 90\n',
        want: /book\.yaml:3:3: "vendor_a\/family_a\*": a \* stands for whole path segments only/,
      },
    ],
    [
      'two equally specific patterns',
      {
        yaml: `percent: 80\nmodels:\n  vendor_b/family_c-3.0/*: 90\n  vendor_b/*/${A_MODEL.split('/')[2]}: 70\n`,
        want: /book\.yaml:4:3: .* are equally specific/,
      },
    ],
    ['models not a map', { yaml: 'percent: 80\nmodels: [a]\n', want: /book\.yaml:2:1: models must be a map/ }],
  ] as const)('refuses %s at file:line:col', (_name, { yaml, want }) => {
    expect(problemOf(yaml)).toMatch(want);
  });

  it('refuses a book named default', () => {
    expect(problemOf('percent: 80\n', 'default')).toMatch(/default\.yaml:1:1: the book's name "default"/);
  });
});
