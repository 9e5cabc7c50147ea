import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/root.js';
import { tsFiles } from '../support/source-files.js';

/**
 * bench/ and test/ do not import each other (issue 26, step 5): what both need (the loopback
 * upstreams, the media fixtures, a process's memory) is in support/, which imports neither, so a
 * benchmark never loads a suite's helpers (their hooks, their service wiring) and a suite never
 * loads a benchmark's (which kills every process it spawned on exit).
 */

/**
 * The relative specifiers of a file's import and export statements (at the start of a line, so
 * that the examples in this file's own table, which are strings, are not read as its imports) and
 * of its dynamic imports (`await import('...')` at the start of an expression).
 */
const IMPORTS = [
  /^\s*(?:import|export)\s[^;]*?\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]/gm,
  /^\s*import\s*['"](\.{1,2}\/[^'"]+)['"]/gm,
  /(?:=|\bawait|\breturn)\s*import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g,
];

/** The top-level folders a file's relative imports land in, given the file's own path. */
function importedFolders(file: string, text: string): string[] {
  const folders = new Set<string>();
  for (const [, spec] of IMPORTS.flatMap((pattern) => [...text.matchAll(pattern)])) {
    const target = posix.normalize(posix.join(posix.dirname(file), spec));
    folders.add(target.split('/')[0]);
  }
  return [...folders].sort();
}

/** `file -> folder` for every import of a folder's files that lands in one of `forbidden`. */
function strayImports(folder: string, forbidden: readonly string[]): string[] {
  return tsFiles(folder).flatMap((file) =>
    importedFolders(file, readFileSync(join(ROOT, file), 'utf8'))
      .filter((target) => forbidden.includes(target))
      .map((target) => `${file} -> ${target}/`),
  );
}

describe('bench/ and test/ do not import each other', () => {
  it.each([
    [
      'a benchmark reaching into test/',
      {
        file: 'bench/upstream.ts',
        text: "import { clip } from '../test/files/fixtures.js';",
        want: ['test'],
      },
    ],
    [
      'a suite reaching into bench/, two levels down',
      {
        file: 'test/reliability/load-support.ts',
        text: "import { rssMb } from '../../bench/support.js';",
        want: ['bench'],
      },
    ],
    [
      'the shared folder, and a file beside it',
      {
        file: 'bench/upstream.ts',
        text: "import { a } from '../support/upstreams/jobs-protocol-server.js';\nimport { b } from './support.js';",
        want: ['bench', 'support'],
      },
    ],
    [
      'a dynamic import and a type import',
      {
        file: 'test/deployments/vendors/runway.test.ts',
        text: "import type { T } from '../../../bench/x.js';\nconst m = await import('../../support/service.js');",
        want: ['bench', 'test'],
      },
    ],
    [
      'a multi-line import and a side-effect import',
      {
        file: 'bench/reference-check.ts',
        text: "import {\n  largePng,\n  movieHeaderLast,\n} from '../test/files/streams.js';\nimport '../bench/x-preload.js';",
        want: ['bench', 'test'],
      },
    ],
    [
      'an import named in a comment or a string, which is no import',
      {
        file: 'bench/http.ts',
        text: "// from '../test/x.js'\nconst s = \"import { a } from '../test/y.js'\";",
        want: [],
      },
    ],
    ['a package', { file: 'bench/http.ts', text: "import autocannon from 'autocannon';", want: [] }],
  ])('importedFolders reads %s', (_name, { file, text, want }) => {
    expect(importedFolders(file, text)).toEqual(want);
  });

  it.each([
    ['bench/', { folder: 'bench', forbidden: ['test'] }],
    ['test/', { folder: 'test', forbidden: ['bench'] }],
    ['support/ (shared by both, so it imports neither)', { folder: 'support', forbidden: ['bench', 'test'] }],
  ])('%s imports nothing from the other side', (_name, { folder, forbidden }) => {
    expect(tsFiles(folder).length).toBeGreaterThan(0);
    expect(strayImports(folder, forbidden)).toEqual([]);
  });
});
