/**
 * Every shell block of README.md and docs/ runs as pasted: each page with a ```sh block has the
 * suite that runs its blocks (all of them, in order; README.md's are claimed block by block in
 * test/docs/readme-blocks.test.ts). A page that gains its first block fails here until it has one.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/build.js';
import { pageBlocks } from '../support/pasted-shell.js';

const RUN_BY: Record<string, string> = {
  'README.md': 'test/docs/readme-blocks.test.ts',
  'docs/client.md': 'test/docs/client-page.test.ts',
  'docs/deployments.md': 'test/docs/deployments-page.test.ts',
  'docs/files-and-assets.md': 'test/docs/files-and-assets-page.test.ts',
  'docs/operating.md': 'test/docs/operating.test.ts',
};

describe('the shell blocks of README.md and docs/', () => {
  const pages = [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`),
  ];

  it('every page with one has a suite that runs it, and that suite reads the page', () => {
    const withBlocks = pages.filter((page) => pageBlocks(page).length > 0);
    expect(withBlocks.sort()).toEqual(Object.keys(RUN_BY).sort());
    for (const [page, suite] of Object.entries(RUN_BY)) {
      expect(existsSync(join(ROOT, suite)), suite).toBe(true);
      expect(readFileSync(join(ROOT, suite), 'utf8'), suite).toContain(`'${page}'`);
    }
  });
});
