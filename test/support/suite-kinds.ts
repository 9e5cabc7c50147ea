/**
 * Which engines and stores a suite runs on, found from what the suite is rather than from a list
 * (vitest.config.ts; docs/architecture.md "Where is the test for this file?"):
 * - a **database suite** is one whose imports (followed through test/ and support/) reach
 *   test/support/service.ts, the module that gives every service of a run the engine the project
 *   names (MEDIAFORGE_TEST_DB): the postgres project runs it a second time on PostgreSQL;
 * - a **store suite** says so itself with `@store-suite` in its header comment (what it writes goes
 *   through the media store without naming one): the s3 and s3-postgres projects run it again with
 *   the media in an S3-compatible store. The statement record (test/support/statement-record.ts)
 *   fails the run when a store path ran only on the local store, so a suite that should say it and
 *   does not is found.
 * The scan reads files only (the config is read before any module runs); the logic is pure over
 * a map of path to text so its unit test needs no files.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';

/** The module that chooses a run's database engine: a suite that reaches it is a database suite. */
export const ENGINE_CHOICE = 'test/support/service.ts';
/** The marker a store suite writes in its header comment. */
export const STORE_MARKER = /^\s*(?:\*|\/\/)\s*@store-suite\b/m;

/** The repository-relative paths of the modules `text` (the file at `path`) imports by a relative path, as .ts. */
export function relativeImports(path: string, text: string): string[] {
  const found: string[] = [];
  // Static imports and re-exports only, at the start of a line: a suite's sample text in a string never counts.
  for (const match of text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+['"](\.{1,2}\/[^'"]+)['"]/gm)) {
    found.push(posix.normalize(posix.join(posix.dirname(path), match[1]!)).replace(/\.(m?)js$/, '.$1ts'));
  }
  for (const match of text.matchAll(/^import\s+['"](\.{1,2}\/[^'"]+)['"]/gm)) {
    found.push(posix.normalize(posix.join(posix.dirname(path), match[1]!)).replace(/\.(m?)js$/, '.$1ts'));
  }
  return found;
}

/** Whether the suite at `path` reaches ENGINE_CHOICE through imports under test/ and support/; `read` gives a file's text or undefined. */
export function isDatabaseSuite(path: string, read: (path: string) => string | undefined): boolean {
  const seen = new Set<string>();
  const pending = [path];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (file === ENGINE_CHOICE) return true;
    if (seen.has(file) || !(file.startsWith('test/') || file.startsWith('support/'))) continue;
    seen.add(file);
    const text = read(file);
    if (text !== undefined) pending.push(...relativeImports(file, text));
  }
  return false;
}

/** Whether the suite's text declares it a store suite. */
export function isStoreSuite(text: string): boolean {
  return STORE_MARKER.test(text);
}

/** Every `*.test.ts` under `dir` of `root`, repository-relative with forward slashes, sorted. */
export function suitesUnder(root: string, dir = 'test'): string[] {
  return readdirSync(join(root, dir))
    .flatMap((name) => {
      const path = `${dir}/${name}`;
      if (statSync(join(root, path)).isDirectory()) return suitesUnder(root, path);
      return name.endsWith('.test.ts') ? [path] : [];
    })
    .sort();
}

/** The database suites and store suites of the checkout at `root`. */
export function suiteKinds(root: string): { database: string[]; store: string[] } {
  const texts = new Map<string, string | undefined>();
  const read = (path: string) => {
    if (!texts.has(path)) {
      try {
        texts.set(path, readFileSync(join(root, path), 'utf8'));
      } catch {
        texts.set(path, undefined); // a package path or a generated file: not followed
      }
    }
    return texts.get(path);
  };
  const suites = suitesUnder(root);
  return {
    database: suites.filter((suite) => isDatabaseSuite(suite, read)),
    store: suites.filter((suite) => isStoreSuite(read(suite) ?? '')),
  };
}
