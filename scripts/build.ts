/**
 * npm run build: compiles what production runs into dist/, so that `npm start` and the `mediaforge`
 * command run plain JavaScript and a production install needs none of the build tools:
 *
 * - runtime/, generated/, catalogue-core/ and the docs server: each TypeScript module transpiled by esbuild to one
 *   JavaScript module at the same relative path (dist/runtime/cli/main.js, ...), so relative imports
 *   and each command's lazy imports stay as written; generated/'s JavaScript validators and every
 *   other file under runtime/ (media the simulator serves) are copied as they are;
 * - the console's page scripts, bundled (dist/runtime/console/assets/);
 * - the documentation site, rendered (dist/docs-site/site/);
 * - the client package (client/dist, scripts/build-client.mjs), unless `--server-only` (npm start:
 *   the server does not need it, and its two tsc runs are most of the build's time);
 * - dist/build-info.json, the fingerprint of the inputs (scripts/build-state.mjs).
 *
 * Types are not checked here (`npx tsc --noEmit` does that); a syntax error fails the build.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import * as esbuild from 'esbuild';
import { renderSite } from '../docs-site/site.js';
import { writeSite } from '../docs-site/site-files.js';
import { bundleConsoleAssets, writeConsoleAssets } from '../runtime/console/console-assets.js';
import { BUILD_INFO, DIST, inputFingerprint, ROOT } from './build-state.mjs';

/**
 * What the server does not run: browser entries (bundled instead), build scripts, declarations, and
 * generated/'s documents and test vectors (the docs site is pre-rendered from them; the tests read them).
 */
const NOT_SERVER = [
  /^runtime\/console\/web\//,
  /^docs-site\/(calculator\/browser|build)\.ts$/,
  /^docs-site\/static\//,
  /^generated\/(docs|vectors)\//,
  /^generated\/requests\/vectors\.json$/,
  /^generated\/openapi\./,
  /\.d\.ts$/,
  /\.sh$/,
];

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    return statSync(join(ROOT, path)).isDirectory() ? filesUnder(path) : [path];
  });
}

const started = Date.now();
// The fingerprint is taken before anything is read: an input changed during the build leaves it stale.
const inputs = inputFingerprint();
// Built beside dist/ and moved into place at the end: a `mediaforge` process started meanwhile
// finds the previous build or none (and runs the sources), never a half-written one.
const NEXT = `${DIST}.next`;
rmSync(NEXT, { recursive: true, force: true });
// The client package compiles in its own process meanwhile (two tsc runs: the longest step).
const withClient = !process.argv.includes('--server-only');
const client = new Promise<void>((resolve, reject) => {
  if (!withClient) return resolve();
  const child = spawn(process.execPath, [join(ROOT, 'scripts', 'build-client.mjs')], { stdio: 'inherit' });
  child.on('error', reject);
  child.on('exit', (code) =>
    code === 0 ? resolve() : reject(new Error(`scripts/build-client.mjs exited with ${code}`)),
  );
});

/** What every esbuild run of the server's modules writes: ES modules for this Node. */
const SERVER_MODULES = { format: 'esm', platform: 'node', target: 'node20', logLevel: 'warning' } as const;

/**
 * Packages shipped as many small modules, bundled once into dist/vendor/<name>.js: Node 20 has no
 * compile cache, and loading kysely's 262 files took ~100 ms of every command's and every server's
 * start (~10 ms as one file); yaml's 73 and prom-client's 33 (with the 51 of @opentelemetry/api it
 * loads) took ~80 and ~110 ms of every server's. Each bundle exports what Node's own import of the
 * package offers (for a CommonJS package: the names Node's ESM loader finds in it, and `default`),
 * so what the server imports from them is unchanged.
 */
const VENDORED = ['kysely', 'yaml', 'prom-client'];
const vendorEntries: esbuild.Plugin = {
  name: 'vendor-entries',
  setup(build) {
    build.onResolve({ filter: /^vendor-entry:/ }, ({ path }) => ({ path, namespace: 'vendor-entry' }));
    build.onLoad({ filter: /.*/, namespace: 'vendor-entry' }, async ({ path }) => {
      const name = path.slice('vendor-entry:'.length);
      const names = Object.keys(await import(name));
      return { contents: `export { ${names.join(', ')} } from '${name}';`, resolveDir: ROOT, loader: 'js' };
    });
  },
};
await esbuild.build({
  entryPoints: Object.fromEntries(VENDORED.map((name) => [`vendor/${name}`, `vendor-entry:${name}`])),
  outdir: NEXT,
  bundle: true,
  plugins: [vendorEntries],
  // A CommonJS package's require of Node's own modules (util, os, ...) stays a require: ESM has none, so each bundle makes one.
  banner: { js: "import { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);" },
  ...SERVER_MODULES,
});

/**
 * Every import stays as written (each module is transpiled alone: esbuild's bundler runs only to
 * let this see them), except a vendored package's, which names its file in dist/vendor/.
 */
const keepImports: esbuild.Plugin = {
  name: 'keep-imports',
  setup(build) {
    build.onResolve({ filter: /.*/ }, ({ kind, path, importer }) => {
      if (kind === 'entry-point') return undefined;
      if (!VENDORED.includes(path)) return { path, external: true };
      const vendored = posix.relative(posix.dirname(relative(ROOT, importer)), `vendor/${path}.js`);
      return { path: vendored.startsWith('.') ? vendored : `./${vendored}`, external: true };
    });
  },
};

/**
 * Trees of the project's own that become one module each, with every import inside the tree bundled
 * (their packages stay imports): generated/validators/ is a wrapper and a compiled schema per model
 * and mode, 123 modules that took ~150 ms of every server's start to load one by one (~30 ms as one
 * file). None of them sends a statement, so the statement record's stacks (which name runtime files) lose nothing.
 */
const ONE_MODULE = [{ tree: 'generated/validators/', entry: 'generated/validators/index.ts' }];
await esbuild.build({
  entryPoints: ONE_MODULE.map(({ entry }) => join(ROOT, entry)),
  outdir: NEXT,
  outbase: ROOT,
  bundle: true,
  packages: 'external',
  ...SERVER_MODULES,
});

const files = ['runtime', 'generated', 'catalogue-core', 'docs-site']
  .flatMap(filesUnder)
  .filter((path) => !NOT_SERVER.some((re) => re.test(path)))
  .filter((path) => !ONE_MODULE.some(({ tree }) => path.startsWith(tree)));
const modules = files.filter((path) => path.endsWith('.ts'));
await esbuild.build({
  entryPoints: modules.map((path) => join(ROOT, path)),
  outdir: NEXT,
  outbase: ROOT,
  bundle: true,
  plugins: [keepImports],
  ...SERVER_MODULES,
});
for (const path of files.filter((p) => !p.endsWith('.ts'))) cpSync(join(ROOT, path), join(NEXT, path));

writeConsoleAssets(await bundleConsoleAssets(), join(NEXT, 'runtime', 'console', 'assets'));
const site = await renderSite();
const siteBytes = writeSite(site, join(NEXT, 'docs-site', 'site'));

await client;

mkdirSync(NEXT, { recursive: true });
writeFileSync(
  join(NEXT, relative(DIST, BUILD_INFO)),
  `${JSON.stringify({ inputs, builtAt: new Date().toISOString() }, null, 2)}\n`,
);
rmSync(DIST, { recursive: true, force: true });
renameSync(NEXT, DIST);
console.log(
  `dist/: ${modules.length} modules and ${ONE_MODULE.length} bundled, ${files.length - modules.length} files copied, console assets, docs site (${site.size} files, ${(siteBytes / 1024 / 1024).toFixed(1)} MiB) in ${Date.now() - started} ms (${relative(process.cwd(), DIST) || '.'})`,
);
