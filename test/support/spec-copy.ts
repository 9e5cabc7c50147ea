import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCatalogue } from '../../generator/load/catalogue.js';
import { SpecError } from '../../generator/load/spec-error.js';
import { ROOT } from './root.js';

/** A temporary copy of spec/ and generator/ (with catalogue-core/; node_modules linked) where a test may add or break files. */
export function copySpec(): { root: string; remove(): void } {
  const root = mkdtempSync(join(tmpdir(), 'mediaforge-spec-'));
  cpSync(join(ROOT, 'spec'), join(root, 'spec'), { recursive: true });
  cpSync(join(ROOT, 'generator'), join(root, 'generator'), { recursive: true });
  // The generator prices and renders with the catalogue's library (its docs and model info).
  cpSync(join(ROOT, 'catalogue-core'), join(root, 'catalogue-core'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(root, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}

/**
 * A copy of the whole checkout a service can run from (spec/, generator/, runtime/, generated/, catalogue-core/,
 * bin/, scripts/; node_modules linked): a maintainer's change to spec/ is generated there and
 * served by `mediaforge serve` started in it (test/deployments/support.ts startMediaforge's cwd).
 */
export function copyCheckout(): { root: string; remove(): void } {
  const copy = copySpec();
  for (const dir of ['runtime', 'generated', 'catalogue-core', 'bin', 'scripts', 'docs', 'docs-site', 'client'])
    cpSync(join(ROOT, dir), join(copy.root, dir), { recursive: true });
  cpSync(join(ROOT, 'tsconfig.json'), join(copy.root, 'tsconfig.json'));
  return copy;
}

/** Runs `generator/cli.ts --check` on a copy of spec/ as a maintainer would: its exit status and standard error. */
export function runGeneratorCheck(root: string): { status: number; stderr: string } {
  try {
    execFileSync(join(ROOT, 'node_modules/.bin/tsx'), [join(ROOT, 'generator/cli.ts'), '--check', '--root', root], {
      stdio: 'pipe',
    });
    return { status: 0, stderr: '' };
  } catch (e) {
    const failure = e as { status: number; stderr: Buffer };
    return { status: failure.status, stderr: failure.stderr.toString() };
  }
}

/** The SpecError that loading a (broken) copy of spec/ throws; fails the test when it loads, or throws anything else. */
export function loadError(root: string): SpecError {
  try {
    loadCatalogue(root);
  } catch (error) {
    if (error instanceof SpecError) return error;
    throw error;
  }
  throw new Error('the catalogue loaded');
}
