import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/catalogue.js';

/**
 * The rooms of the provider side (docs/architecture.md: the tree of runtime/ and "Where is routing decided?"): deployments/ is the port only,
 * upstreams/ and simulator/ implement it from the layers below, routing/ chooses among them. The
 * test reads every relative import of runtime/ and checks which rooms each room reaches.
 */

/** Every .ts file under a directory of the checkout, relative to the root (with `/`). */
function tsFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (statSync(join(ROOT, path)).isDirectory()) return tsFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

const IMPORT = /(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;

/** The room of a path: the folder under runtime/ (`generated` for generated/), or undefined elsewhere. */
function roomOf(path: string): string | undefined {
  if (path.startsWith('generated/')) return 'generated';
  const match = /^runtime\/([^/]+)\//.exec(path);
  return match ? match[1] : undefined;
}

/** The rooms a file's text imports from, given the file's own path. */
function importedRooms(file: string, text: string): string[] {
  const rooms = new Set<string>();
  for (const [, spec] of text.matchAll(IMPORT)) {
    const target = posix.normalize(posix.join(posix.dirname(file), spec));
    const room = roomOf(target);
    if (room && room !== roomOf(file)) rooms.add(room);
  }
  return [...rooms].sort();
}

/** `file -> room` for every import of a room's files that is not among `allowed`. */
function strayImports(room: string, allowed: readonly string[]): string[] {
  return tsFiles(`runtime/${room}`).flatMap((file) =>
    importedRooms(file, readFileSync(join(ROOT, file), 'utf8'))
      .filter((target) => !allowed.includes(target))
      .map((target) => `${file} -> ${target}`),
  );
}

describe('the rooms of the provider side (issue 26, step 3)', () => {
  it.each([
    [
      'a sibling room',
      {
        file: 'runtime/upstreams/jobs.ts',
        text: "import { x } from '../deployments/deployment.js';",
        want: ['deployments'],
      },
    ],
    ['its own room', { file: 'runtime/upstreams/jobs.ts', text: "import { x } from './upstream-http.js';", want: [] }],
    [
      'generated/',
      {
        file: 'runtime/upstreams/jobs.ts',
        text: "import { x } from '../../generated/catalogue.js';",
        want: ['generated'],
      },
    ],
    [
      'a type import and a dynamic one',
      {
        file: 'runtime/routing/build.ts',
        text: "import type { C } from '../context.js';\nconst m = await import('../tasks/x.js');",
        want: ['tasks'],
      },
    ],
    ['a package', { file: 'runtime/net/guard.ts', text: "import ipaddr from 'ipaddr.js';", want: [] }],
  ])('importedRooms reads %s', (_name, { file, text, want }) => {
    expect(importedRooms(file, text)).toEqual(want);
  });

  it('deployments/ holds only the port: the Deployment interface and UpstreamError', () => {
    expect(tsFiles('runtime/deployments').sort()).toEqual([
      'runtime/deployments/deployment.ts',
      'runtime/deployments/upstream-error.ts',
    ]);
    expect(strayImports('deployments', ['blobs', 'generated'])).toEqual([]);
  });

  it('upstreams/ imports only the port, net/, files/, blobs/ and generated/', () => {
    expect(strayImports('upstreams', ['deployments', 'net', 'files', 'blobs', 'generated'])).toEqual([]);
  });

  it('simulator/ imports only the port, net/, files/, blobs/ and generated/', () => {
    expect(strayImports('simulator', ['deployments', 'net', 'files', 'blobs', 'generated'])).toEqual([]);
  });

  it('the outbound guard lives in net/: webhooks/ keeps no agent or address check of its own', () => {
    expect(tsFiles('runtime/webhooks').filter((file) => /guard|outbound|agents/.test(file))).toEqual([]);
  });

  it('the check finds a stray import (it is not vacuous)', () => {
    expect(importedRooms('runtime/upstreams/jobs.ts', "import { failTask } from '../tasks/resolve-task.js';")).toEqual([
      'tasks',
    ]);
  });
});

/** The top folder of a checkout path (`catalogue-core`, `generated`, `runtime`, ...). */
const topOf = (path: string) => path.split('/')[0];

/** Every .ts and .js file under a top folder, relative to the root. */
function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (statSync(join(ROOT, path)).isDirectory()) return sourceFiles(path);
    return /\.(?:ts|js)$/.test(name) ? [path] : [];
  });
}

/** The top folders a file's relative imports reach, other than its own. */
function importedTops(file: string, text: string): string[] {
  const tops = new Set<string>();
  for (const [, spec] of text.matchAll(IMPORT)) {
    const top = topOf(posix.normalize(posix.join(posix.dirname(file), spec)));
    if (top !== topOf(file)) tops.add(top);
  }
  return [...tops].sort();
}

/** `file -> folder` for every import of a top folder's files that is not among `allowed`. */
function strayTopImports(dir: string, allowed: readonly string[]): string[] {
  return sourceFiles(dir).flatMap((file) =>
    importedTops(file, readFileSync(join(ROOT, file), 'utf8'))
      .filter((target) => !allowed.includes(target))
      .map((target) => `${file} -> ${target}`),
  );
}

/**
 * One direction (docs/architecture.md): spec -> generator -> generated -> runtime. catalogue-core/,
 * the hand-written rules, prices and money every generated module uses, sits below generated/: it
 * is imported by generated/ (through generated/support.ts) and runtime/, and imports nothing of theirs.
 */
describe('the one-way rule (issue 26, step 4)', () => {
  it.each([
    [
      'generated/ to catalogue-core/',
      { file: 'generated/support.ts', text: "export * from '../catalogue-core/money.js';", want: ['catalogue-core'] },
    ],
    ['its own folder', { file: 'catalogue-core/price.ts', text: "import { ceilDiv } from './money.js';", want: [] }],
    [
      'runtime/ reaching up',
      { file: 'catalogue-core/price.ts', text: "import { x } from '../runtime/errors.js';", want: ['runtime'] },
    ],
  ])('importedTops reads %s', (_name, { file, text, want }) => {
    expect(importedTops(file, text)).toEqual(want);
  });

  it('catalogue-core/ imports nothing of generated/, runtime/ or generator/', () => {
    expect(strayTopImports('catalogue-core', [])).toEqual([]);
  });

  it('generated/ imports only catalogue-core/ of what is hand-written', () => {
    expect(strayTopImports('generated', ['catalogue-core'])).toEqual([]);
  });

  it('runtime/ imports no generator code: only generated/, catalogue-core/ and the docs site it serves', () => {
    expect(strayTopImports('runtime', ['generated', 'catalogue-core', 'docs-site'])).toEqual([]);
  });

  it('generated/support.ts is only the re-exports of catalogue-core/: the library is not copied', () => {
    const text = readFileSync(join(ROOT, 'generated/support.ts'), 'utf8');
    expect(text).not.toMatch(/\bfunction\b|\binterface\b|\bconst\b/);
    expect(importedTops('generated/support.ts', text)).toEqual(['catalogue-core']);
  });
});
