import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/root.js';
import { packageImports, valueImports } from './import-graph.js';

/**
 * What every process loads before it does anything: the command line (every command, `serve` and
 * the worker among them) and the service those build. Node 20 has no compile cache, so each module
 * loaded at start costs every command and every server start again; the packages below are large
 * (stripe alone is some 200 modules, the media parsers some 100) and only some processes need them,
 * so they are imported where they are used (`await import(...)`), never reached from these at load.
 */
const ENTRIES = ['runtime/cli/main.ts', 'runtime/service.ts'];

/** Packages loaded only where the settings or the work name them. */
const LOADED_WHEN_USED = [
  'stripe', // payments on (MEDIAFORGE_STRIPE_SECRET_KEY)
  'pg', // a PostgreSQL database
  'ioredis', // shared rate limits (MEDIAFORGE_REDIS_URL)
  '@aws-sdk/client-s3', // the S3 store
  '@aws-sdk/lib-storage',
  'music-metadata', // probing a file (runtime/files/probe.ts)
  'mp4box',
  'image-size',
  'file-type',
  'esbuild', // the console's assets in a checkout without a build
];

/** The runtime files and packages reached from `entries` by static value imports. */
function loadedAtStart(entries: readonly string[]): { files: Set<string>; packages: Map<string, string> } {
  const files = new Set<string>();
  const packages = new Map<string, string>(); // package -> the first file that imports it
  const pending = [...entries];
  while (pending.length) {
    const file = pending.pop()!;
    if (files.has(file) || !existsSync(join(ROOT, file))) continue;
    files.add(file);
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const name of packageImports(file, text)) if (!packages.has(name)) packages.set(name, file);
    pending.push(...valueImports(file, text));
  }
  return { files, packages };
}

describe('packages loaded at start', () => {
  it('the command line and the service reach none of the packages loaded when used', () => {
    const { files, packages } = loadedAtStart(ENTRIES);
    // The walk reached the service's routes and storage, so an empty answer below is not vacuous.
    expect(files.size).toBeGreaterThan(150);
    expect(packages.has('kysely')).toBe(true);
    const eager = LOADED_WHEN_USED.filter((name) => packages.has(name)).map(
      (name) => `${name} <- ${packages.get(name)}`,
    );
    expect(eager).toEqual([]);
  });

  it("the console commands load no model's validator: what needs only the models' descriptions reads generated/model-info.ts", () => {
    // Some 120 generated validator modules, about 0.06 s of CPU at every command's start, for a default model's id (runtime/config.ts).
    const commands = ['admin', 'operator', 'webhooks', 'usage-export'].map((name) => `runtime/cli/commands/${name}.ts`);
    const { files } = loadedAtStart(commands);
    expect(files.has('runtime/config.ts')).toBe(true);
    expect(files.has('generated/model-info.ts')).toBe(true);
    expect([...files].filter((file) => /^generated\/(catalogue|validators\/)/.test(file))).toEqual([]);
  });

  it.each([
    ['a package', { text: "import Stripe from 'stripe';", want: ['stripe'] }],
    [
      'a scoped package, deep path',
      { text: "import { S3 } from '@aws-sdk/client-s3/dist/x.js';", want: ['@aws-sdk/client-s3'] },
    ],
    ['a package subpath', { text: "import { x } from 'kysely/helpers/postgres';", want: ['kysely'] }],
    ['a node module', { text: "import { join } from 'node:path';", want: [] }],
    ['a relative import', { text: "import { a } from './b.js';", want: [] }],
    ['import type', { text: "import type Stripe from 'stripe';", want: [] }],
    ['a dynamic import', { text: "const m = await import('stripe');", want: [] }],
    ['an export from', { text: "export { parseStream } from 'music-metadata';", want: ['music-metadata'] }],
  ])('packageImports reads %s', (_name, { text, want }) => {
    expect(packageImports('runtime/x/a.ts', text)).toEqual(want);
  });
});
