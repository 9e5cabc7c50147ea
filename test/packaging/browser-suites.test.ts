/**
 * `npm ci && npm test` on a machine without a browser: vitest (this repository's config, a real
 * `vitest list --filesOnly` process) leaves the browser suites out and says so in one line; under
 * CI=true it keeps them, so that a CI without a browser fails instead of passing quietly. The PATH
 * given to vitest holds node alone (no chromium, chromium-browser, google-chrome).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/build.js';

const run = promisify(execFile);
const bare = mkdtempSync(join(tmpdir(), 'mediaforge-no-browser-'));
symlinkSync(process.execPath, join(bare, 'node'));
afterAll(() => rmSync(bare, { recursive: true, force: true }));

const BROWSER_SUITES = ['test/console/pages.browser.test.ts', 'test/docs/site.browser.test.ts'];

async function listed(env: Record<string, string | undefined>): Promise<{ files: string[]; output: string }> {
  const { CI: _ci, MEDIAFORGE_TEST_BROWSER: _browser, MEDIAFORGE_BROWSER_NOTICE: _notice, ...rest } = process.env;
  const { stdout, stderr } = await run(
    process.execPath,
    [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'list', '--filesOnly', '--project', 'sqlite'],
    {
      cwd: ROOT,
      env: { ...rest, PATH: bare, ...env },
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  const output = `${stdout}\n${stderr}`;
  return { files: [...output.matchAll(/\[sqlite\] (\S+)/g)].map((m) => m[1]), output };
}

describe('the browser suites on a machine without a browser', () => {
  it.each([
    ['without CI: left out, with one loud line', { given: {}, want: { listed: false, notice: 1 } }],
    [
      'under CI=true: kept (they then fail for want of a browser)',
      { given: { CI: 'true' }, want: { listed: true, notice: 0 } },
    ],
    [
      'with MEDIAFORGE_TEST_BROWSER naming one: kept',
      { given: { MEDIAFORGE_TEST_BROWSER: '/opt/some/chrome' }, want: { listed: true, notice: 0 } },
    ],
  ] as const)(
    '%s',
    async (_name, { given, want }) => {
      const { files, output } = await listed(given);
      expect(files).toContain('test/cli/help.test.ts');
      for (const suite of BROWSER_SUITES) expect(files.includes(suite), suite).toBe(want.listed);
      expect(output.split('\n').filter((line) => line.startsWith('BROWSER SUITES SKIPPED'))).toHaveLength(want.notice);
    },
    60_000,
  );
});
