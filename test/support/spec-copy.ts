import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './catalogue.js';

/** A temporary copy of spec/ (plus node_modules, linked) where a test may add or break files. */
export function copySpec(): { root: string; remove(): void } {
  const root = mkdtempSync(join(tmpdir(), 'mediaforge-spec-'));
  cpSync(join(ROOT, 'spec'), join(root, 'spec'), { recursive: true });
  cpSync(join(ROOT, 'generator'), join(root, 'generator'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(root, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}
