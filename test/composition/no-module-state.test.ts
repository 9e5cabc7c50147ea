import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/root.js';
import { moduleStateProblems } from './module-state.js';

/** Every TypeScript and JavaScript source under `dir`, as paths relative to the repository. */
function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return sources(path);
    return /\.(ts|js|mjs)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/**
 * The page scripts of the playground and console: each is bundled alone and runs in a browser page,
 * where starting on load is its purpose and its module state is that page's; none runs in the service.
 */
const BROWSER_SCRIPTS = 'runtime/console/web/';

/** Module state kept on purpose, each with its reason. Nothing else under runtime/ may have any. */
const ALLOWED: Record<string, string> = {
  // A pool of random bytes refilled from the system's source: ids of every service come from it and
  // nothing of any service is in it (no registry: it holds no value anyone reads back).
  'runtime/ids.ts:7: module-level let': 'random-byte pool',
};

/**
 * The same for the modules the suites share (test/ helpers and support/): a fork runs many files
 * one after another without re-importing them (vitest.config.ts, isolation off), so state here
 * would pass from one file to the next. What a file may still leave behind (the environment, child
 * processes) is checked after each file by test/support/leak-check.ts.
 */
const ALLOWED_IN_TESTS: Record<string, string> = {
  // spec/'s catalogue, loaded once per fork: read only, and the same for every file of a checkout.
  'test/support/catalogue.ts:7: module-level let': 'catalogue cache',
  // The services a fork spawned, killed if the fork itself exits first (each leaves the set when it exits).
  // The leak check is a vitest setup file: registering its hooks on import is what it is for.
  'test/support/leak-check.ts:86: runs on import: afterAll(async () => {': 'setup file',
  'test/support/leak-check.ts:29: runs on import: beforeEach(async () => {':
    'setup file: the loop turns before each test',
  'test/support/leak-check.ts:15: runs on import: if (process.env.MEDIAFORGE_STATEMENT_RECORD) nameRecordedSuite();':
    'setup file: names the suite and project for the statement record',
  // Scripts that are run, not imported: running is what they are for.
  'test/support/check-statement-record.ts:51: runs on import: if (dir) await check(dir);': 'the test:statements script',
  'test/support/statement-recorder.mjs:18: runs on import: if (directory) install(directory);': 'node --import preload',
  'support/service-process.ts:26: module-level children is changed at run time (a registry)': 'exit safety net',
  "support/service-process.ts:30: runs on import: process.once('exit', killAll);": 'exit safety net',
  "support/service-process.ts:31: runs on import: for (const signal of ['SIGINT', 'SIGTERM'] as const) {":
    'exit safety net',
};

describe('composition has no side effects (issue 20, part 3)', () => {
  const files = sources('runtime');

  it('reads process.env only in runtime/config.ts', () => {
    const readers = files.filter(
      (file) =>
        file !== 'runtime/config.ts' &&
        /process\s*\.\s*env\b|process\s*\[\s*['"]env['"]\s*\]/.test(readFileSync(join(ROOT, file), 'utf8')),
    );
    expect(readers).toEqual([]);
    expect(readFileSync(join(ROOT, 'runtime/config.ts'), 'utf8')).toContain('process.env');
  });

  it('no runtime module runs anything on import, keeps a module-level let/var, or changes a module-level const', () => {
    const problems = files
      .filter((file) => !file.startsWith(BROWSER_SCRIPTS))
      .flatMap((file) => moduleStateProblems(file, readFileSync(join(ROOT, file), 'utf8')))
      .filter((problem) => !(problem in ALLOWED));
    expect(problems).toEqual([]);
  });

  it("no module of test/ (the suites' helpers) or support/ runs anything on import or keeps state: with isolation off, files share a fork and its module cache", () => {
    const helpers = [...sources('test'), ...sources('support')].filter((file) => !file.endsWith('.test.ts'));
    const problems = helpers
      .flatMap((file) => moduleStateProblems(file, readFileSync(join(ROOT, file), 'utf8')))
      .filter((problem) => !(problem in ALLOWED_IN_TESTS));
    expect(problems).toEqual([]);
  });

  it('every allowed exception still exists (a stale entry would hide a new one at its place)', () => {
    const allowed = { ...ALLOWED, ...ALLOWED_IN_TESTS };
    const found = new Set(
      Object.keys(allowed)
        .map((key) => key.split(':')[0])
        .flatMap((file) => moduleStateProblems(file, readFileSync(join(ROOT, file), 'utf8'))),
    );
    expect(Object.keys(allowed).filter((key) => !found.has(key))).toEqual([]);
  });

  it('the checks catch what they look for (they are not vacuous)', () => {
    const text = [
      "import { x } from './x.js';",
      'export interface Shape { a: number }',
      'const hooks: Array<() => void> = [];',
      'export function onThing(hook: () => void) { hooks.push(hook); }',
      'const cache = new Map<string, number>();',
      'function remember(k: string) { cache.set(k, 1); }',
      'const byName = {} as Record<string, number>;',
      'export function put(n: string) { byName[n] = 1; }',
      "const FIXED = new Set(['a']);",
      'export function has(a: string) { return FIXED.has(a); }',
      'let registered = false;',
      'onThing(() => {});',
      "const text = 'registerHooks(); let y = 1;';",
      'const armed = parse(text);',
      'export function reach(n: string) { armed?.set(n, 0); }',
    ].join('\n');
    expect(moduleStateProblems('sample.ts', text)).toEqual([
      'sample.ts:11: module-level let',
      'sample.ts:12: runs on import: onThing(() => {});',
      'sample.ts:3: module-level hooks is changed at run time (a registry)',
      'sample.ts:5: module-level cache is changed at run time (a registry)',
      'sample.ts:7: module-level byName is changed at run time (a registry)',
      'sample.ts:14: module-level armed is changed at run time (a registry)',
    ]);
    expect(/process\s*\.\s*env\b/.test('const armed = parse(process.env.MEDIAFORGE_FAULT_POINTS);')).toBe(true);
  });
});
