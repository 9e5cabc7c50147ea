import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/root.js';

const GENERATED = join(ROOT, 'generated');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|js)$/.test(name) ? [path] : [];
  });
}

describe('generated/ is type-checked with nothing suppressed', () => {
  it('no generated module carries @ts-nocheck, @ts-ignore or @ts-expect-error', () => {
    const files = sourceFiles(GENERATED);
    expect(files.length).toBeGreaterThan(0);
    const found = files
      .filter((file) => /@ts-(nocheck|ignore|expect-error)/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(ROOT, file));
    expect(found).toEqual([]);
  });

  it('tsconfig.json type-checks generated/', () => {
    const config = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')) as {
      include: string[];
      exclude?: string[];
    };
    expect(config.include).toContain('generated');
    expect(config.exclude ?? []).not.toContain('generated');
  });
});
