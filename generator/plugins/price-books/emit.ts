import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { mostSpecificEntries } from '../../../catalogue-core/model-patterns.js';
import { PRICE_BOOK_MAX_PERCENT } from '../../../catalogue-core/price-book.js';
import { readYaml, type YamlSource } from '../../load/read-yaml.js';
import { SpecError, type SpecProblem } from '../../load/spec-error.js';
import type { Plugin } from '../../plugin.js';
import { printModule } from '../../print/module.js';
import type { PriceBook } from './template.js';

const DIR = 'spec/price-books';
const BOOK_KEYS = ['percent', 'models'];
/** A book's name is its file's: a lowercase word, and never `default` (the published catalogue's name on the CLI). */
const NAME = /^[a-z][a-z0-9-]{0,31}$/;

export interface LoadedBooks {
  books: Record<string, PriceBook>;
  /** Per book, model id -> percent, for the models an entry prices. */
  resolved: Record<string, Record<string, number>>;
  files: string[];
}

const isMap = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function percentOf(source: YamlSource, found: SpecProblem[], path: string[], value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > PRICE_BOOK_MAX_PERCENT) {
    found.push(
      source.problem(
        path,
        `percent must be a whole number from 1 to ${PRICE_BOOK_MAX_PERCENT} (of the published price)`,
      ),
    );
    return 0;
  }
  return value;
}

function bookFiles(root: string): string[] {
  let names: string[];
  try {
    names = readdirSync(join(root, DIR));
  } catch {
    return [];
  }
  return names
    .filter((name) => name.endsWith('.yaml'))
    .sort()
    .map((name) => `${DIR}/${name}`);
}

/**
 * Reads and checks every spec/price-books/*.yaml under `root` against the catalogue's model ids;
 * every problem is reported as file:line:col.
 */
export function loadPriceBooks(root: string, modelIds: readonly string[]): LoadedBooks {
  const found: SpecProblem[] = [];
  const books: Record<string, PriceBook> = {};
  const resolved: Record<string, Record<string, number>> = {};
  const files = bookFiles(root);
  for (const file of files) {
    const name = file.slice(DIR.length + 1, -'.yaml'.length);
    const { source, problems } = readYaml(root, file);
    found.push(...problems);
    if (!source) continue;
    const data = source.data;
    if (!isMap(data)) {
      found.push(source.problem([], 'a price book must be a map with percent (and models)'));
      continue;
    }
    if (!NAME.test(name) || name === 'default')
      found.push(source.problem([], `the book's name "${name}" must be a lowercase word (a-z, 0-9, -), not "default"`));
    for (const key of Object.keys(data))
      if (!BOOK_KEYS.includes(key)) found.push(source.problem([key], `unknown key "${key}"`));
    if (data.percent === undefined) found.push(source.problem([], 'a price book needs a percent'));
    const percent = data.percent === undefined ? 0 : percentOf(source, found, ['percent'], data.percent);
    const models: Record<string, number> = {};
    if (data.models !== undefined && !isMap(data.models))
      found.push(source.problem(['models'], 'models must be a map from model ids or patterns to a percent'));
    else
      for (const [entry, value] of Object.entries(data.models ?? {})) {
        const at = ['models', entry];
        models[entry] = percentOf(source, found, at, value);
        const segments = entry.split('/');
        if (entry.includes('*') && segments.some((s) => s !== '*' && s.includes('*')))
          found.push(source.problem(at, `"${entry}": a * stands for whole path segments only`));
        else if (!modelIds.some((id) => mostSpecificEntries([entry], id).length))
          found.push(
            source.problem(
              at,
              entry.includes('*') ? `the pattern "${entry}" matches no model` : `unknown model "${entry}"`,
            ),
          );
      }
    const perModel: Record<string, number> = {};
    const entries = Object.keys(models);
    for (const id of modelIds) {
      const best = mostSpecificEntries(entries, id);
      if (best.length > 1)
        found.push(
          source.problem(
            ['models', best[1]],
            `"${best.join('" and "')}" are equally specific for ${id}: price it by its id`,
          ),
        );
      else if (best.length === 1) perModel[id] = models[best[0]];
    }
    books[name] = { percent, models };
    resolved[name] = perModel;
  }
  if (found.length) throw new SpecError(found);
  return { books, resolved, files };
}

/** generated/price-books.ts (code: ./template.ts). Never a docs page nor the contract: books are not published. */
export const priceBooksPlugin: Plugin = {
  name: 'price-books',
  emit: ({ catalogue }) => {
    const loaded = loadPriceBooks(
      catalogue.root,
      catalogue.models.map((m) => m.id),
    );
    return [
      {
        path: 'price-books.ts',
        inputs: [loaded.files.length ? `${DIR}/*.yaml (${loaded.files.length} books)` : `${DIR}/ (no books)`],
        contents: printModule({
          template: new URL('./template.ts', import.meta.url),
          imports: { '../support/template.js': './support.js' },
          values: { PRICE_BOOKS: loaded.books, RESOLVED: loaded.resolved },
        }),
      },
    ];
  },
};
