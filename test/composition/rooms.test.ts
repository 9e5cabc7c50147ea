import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/root.js';
import { importCycles, valueImports } from './import-graph.js';
import { filesUnder, tsFiles } from '../support/source-files.js';

/**
 * The rooms of the provider side (docs/architecture.md: the tree of runtime/ and "Where is routing decided?"): deployments/ is the port only,
 * upstreams/ and simulator/ implement it from the layers below, routing/ chooses among them. The
 * test reads every relative import of runtime/ and checks which rooms each room reaches.
 */

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

/** Every room of runtime/ (its folders), and generated/. */
const ROOMS = [
  ...readdirSync(join(ROOT, 'runtime')).filter((name) => statSync(join(ROOT, 'runtime', name)).isDirectory()),
  'generated',
];

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
  return filesUnder(dir, /\.(?:ts|js)$/).flatMap((file) =>
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

/**
 * The queue and the rooms around it (issue 26, step 2; docs/architecture.md): queue/ owns work
 * items below tasks/; worker/ (the task pipeline) sits above tasks/; webhooks/ schedules its
 * deliveries through queue/. No import runs back up, and no file cycle exists outside type imports.
 */
describe('the queue room and the direction of imports (issue 26, step 2)', () => {
  it('tasks/, ledger/ and webhooks/ import nothing from worker/', () => {
    const stray = ['tasks', 'ledger', 'webhooks'].flatMap((room) =>
      strayImports(
        room,
        ROOMS.filter((r) => r !== 'worker'),
      ),
    );
    expect(stray).toEqual([]);
  });

  it('worker/ imports nothing from webhooks/ (the kind map names the delivery kind)', () => {
    expect(
      strayImports(
        'worker',
        ROOMS.filter((r) => r !== 'webhooks'),
      ),
    ).toEqual([]);
  });

  it('webhooks/ imports nothing from the edge (http/, console/, compat/, cli/): the language and refusal helpers sit at the top of runtime/', () => {
    const edge = ['http', 'console', 'compat', 'cli'];
    expect(
      strayImports(
        'webhooks',
        ROOMS.filter((r) => !edge.includes(r)),
      ),
    ).toEqual([]);
  });

  it('assets/ takes no value from tasks/ (saving an output gets the task from the route that read it)', () => {
    const upward = tsFiles('runtime/assets').flatMap((file) =>
      valueImports(file, readFileSync(join(ROOT, file), 'utf8'))
        .filter((target) => target.startsWith('runtime/tasks/'))
        .map((target) => `${file} -> ${target}`),
    );
    expect(upward).toEqual([]);
  });

  it('queue/ stands below tasks/: it imports only storage/ (and top-level files: context, config)', () => {
    expect(strayImports('queue', ['storage'])).toEqual([]);
  });

  it('no import cycle among the files of runtime/ (type-only imports aside)', () => {
    const graph = new Map(
      tsFiles('runtime').map((file) => [file, valueImports(file, readFileSync(join(ROOT, file), 'utf8'))] as const),
    );
    expect(graph.size).toBeGreaterThan(100);
    expect(importCycles(graph)).toEqual([]);
  });

  it.each([
    ['a value import', { text: "import { a } from './b.js';", want: ['runtime/x/b.ts'] }],
    ['an export from', { text: "export { a } from '../y/b.js';", want: ['runtime/y/b.ts'] }],
    ['a mixed import', { text: "import { a, type B } from './b.js';", want: ['runtime/x/b.ts'] }],
    ['a namespace import', { text: "import * as b from './b.js';", want: ['runtime/x/b.ts'] }],
    ['an import for its effect', { text: "import './b.js';", want: ['runtime/x/b.ts'] }],
    ['import type', { text: "import type { A } from './b.js';", want: [] }],
    ['only type names', { text: "import { type A, type B } from './b.js';", want: [] }],
    ['export type', { text: "export type { A } from './b.js';", want: [] }],
    ['a package', { text: "import ts from 'typescript';", want: [] }],
    ['a dynamic import', { text: "const m = await import('./b.js');", want: [] }],
  ])('valueImports reads %s', (_name, { text, want }) => {
    expect(valueImports('runtime/x/a.ts', text)).toEqual(want);
  });

  it.each([
    ['none', { given: { a: ['b'], b: ['c'], c: [] }, want: [] }],
    ['two files', { given: { a: ['b'], b: ['a'], c: ['a'] }, want: [['a', 'b']] }],
    ['a ring of three', { given: { a: ['b'], b: ['c'], c: ['a'] }, want: [['a', 'b', 'c']] }],
    ['a file importing itself', { given: { a: ['a'] }, want: [['a']] }],
    ['an import outside the graph', { given: { a: ['z'] }, want: [] }],
  ])('importCycles finds %s', (_name, { given, want }) => {
    expect(importCycles(new Map(Object.entries(given)))).toEqual(want);
  });

  it('the direction check finds an upward import (it is not vacuous)', () => {
    expect(importedRooms('runtime/tasks/resolve-task.ts', "import { x } from '../worker/task-work.js';")).toEqual([
      'worker',
    ]);
  });
});
