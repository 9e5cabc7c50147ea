import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { catalogue } from '../../generated/catalogue.js';
import { ROOT } from '../support/root.js';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|js|json|ya?ml|hbs|html|css)$/.test(name) ? [path] : [];
  });
}

describe('the runtime is model-agnostic', () => {
  // Every vendor, family and model id of the catalogue, plus the placeholder patterns of the specification.
  const names = new Set<string>();
  for (const model of catalogue.values()) {
    names.add(model.info.id);
    names.add(model.info.vendor);
    names.add(model.info.family.split('-')[0]);
  }
  const pattern = new RegExp(
    `vendor_[a-z]|family_[a-z]|\\b(?:${[...names].map((n) => n.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|')})\\b`,
  );

  it('no file under runtime/ names a model, vendor or family', () => {
    const offenders = sourceFiles(join(ROOT, 'runtime')).filter((file) => pattern.test(readFileSync(file, 'utf8')));
    expect(offenders.map((f) => relative(ROOT, f))).toEqual([]);
  });

  it('the check would catch one (it is not vacuous)', () => {
    expect(pattern.test("if (model === 'vendor_d/family_d/reference-to-video')")).toBe(true);
    expect(pattern.test('const o3 = catalogue.get(id)')).toBe(catalogue.has('vendor_c/o3/reference-to-video'));
  });
});
