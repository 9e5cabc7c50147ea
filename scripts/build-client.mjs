#!/usr/bin/env node
// Builds the @mediaforge/client package (client/) into client/dist: ES modules in dist/esm, CommonJS in
// dist/cjs (its own package.json says so), each with its .d.ts files. The generated SDK types are
// copied into the package here: client/src/sdk-types.ts, which re-exports generated/sdk/types.ts in
// this repository, is replaced by that file's text, so the published package depends on nothing
// outside client/. Run by `npm run build` and by `npm pack` in client/ (its prepack script, which
// leaves a build made from the same inputs as it is: --unless-current).
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { inputFingerprint, recordedInputs } from './build-state.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLIENT = join(ROOT, 'client');
const STAGE = join(CLIENT, '.build');
const DIST = join(CLIENT, 'dist');
/**
 * The inputs client/dist was built from (scripts/build-state.mjs's fingerprint, recorded as
 * dist/build-info.json records it), beside it and not in the package (build-state.mjs
 * recordedInputs reads both). With `--unless-current` (the prepack script) a build whose inputs are unchanged
 * is not redone: `npm pack` right after `npm run build` packs what that build made, without its
 * two tsc runs again (13 s of CPU a pack in the test runs, which pack three times).
 */
const BUILT_FROM = join(CLIENT, '.built-from');

/** Copies client/src to `dir` with the generated types in place of the re-export. */
function stage(dir, packageType) {
  cpSync(join(CLIENT, 'src'), dir, { recursive: true });
  writeFileSync(join(dir, 'sdk-types.ts'), readFileSync(join(ROOT, 'generated', 'sdk', 'types.ts'), 'utf8'));
  // The nearest package.json decides whether NodeNext compiles a folder as ES modules or CommonJS.
  if (packageType) writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ type: packageType })}\n`);
}

/** Compiles one staged copy; throws with tsc's diagnostics when it does not compile clean. */
function compile(dir, outDir) {
  const program = ts.createProgram([join(dir, 'index.ts'), join(dir, 'webhooks.ts')], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    types: ['node'],
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: false,
    declaration: true,
    sourceMap: false,
    removeComments: false,
    rootDir: dir,
    outDir,
    skipLibCheck: true,
  });
  const result = program.emit();
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...result.diagnostics];
  if (diagnostics.length) {
    const host = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => ROOT, getNewLine: () => '\n' };
    throw new Error(`@mediaforge/client does not compile:\n${ts.formatDiagnostics(diagnostics, host)}`);
  }
}

const started = Date.now();
// Taken before anything is read: an input changed during the build leaves it stale.
const inputs = inputFingerprint();
const entries = ['esm/index.js', 'esm/webhooks.js', 'cjs/index.js', 'cjs/webhooks.js'].map((path) => join(DIST, path));
if (
  process.argv.includes('--unless-current') &&
  recordedInputs(BUILT_FROM) === inputs &&
  entries.every((path) => existsSync(path))
) {
  console.log('@mediaforge/client is current (client/dist was built from these sources): not rebuilt');
  process.exit(0);
}
rmSync(BUILT_FROM, { force: true });
rmSync(STAGE, { recursive: true, force: true });
rmSync(DIST, { recursive: true, force: true });
try {
  stage(join(STAGE, 'esm'));
  stage(join(STAGE, 'cjs'), 'commonjs');
  compile(join(STAGE, 'esm'), join(DIST, 'esm'));
  compile(join(STAGE, 'cjs'), join(DIST, 'cjs'));
  mkdirSync(join(DIST, 'cjs'), { recursive: true });
  writeFileSync(join(DIST, 'cjs', 'package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);
} finally {
  rmSync(STAGE, { recursive: true, force: true });
}
writeFileSync(BUILT_FROM, `${JSON.stringify({ inputs })}\n`);
console.log(`@mediaforge/client built in ${Date.now() - started} ms (client/dist/esm, client/dist/cjs)`);
