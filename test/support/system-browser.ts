/**
 * The browser the *.browser.test.ts suites drive (playwright-core, which ships no browser): the
 * first of chromium, chromium-browser, google-chrome, google-chrome-stable on PATH (or
 * MEDIAFORGE_TEST_BROWSER). vitest.config.ts leaves the browser suites out, with one line saying
 * so, on a machine without one, so `npm ci && npm test` passes there; under CI=true (which .ci/run
 * sets, and which installs Debian's chromium) they are always run, and fail when none is found.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

const NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The path of a system Chromium or Chrome, or undefined. */
export function findSystemBrowser(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.MEDIAFORGE_TEST_BROWSER) return env.MEDIAFORGE_TEST_BROWSER;
  const dirs = (env.PATH ?? '').split(delimiter).filter(Boolean);
  for (const name of NAMES) for (const dir of dirs) if (executable(join(dir, name))) return join(dir, name);
  return undefined;
}

/** Whether this run must have a browser: CI runs every suite. */
export function browserRequired(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.CI === 'true' || env.CI === '1';
}

/** The browser for a browser suite's beforeAll; throws with what to install when there is none. */
export function systemBrowser(): string {
  const found = findSystemBrowser();
  if (!found)
    throw new Error(
      `no Chromium or Chrome on PATH (${NAMES.join(', ')}): apt-get install -y chromium, or set MEDIAFORGE_TEST_BROWSER; .ci/run installs it`,
    );
  return found;
}
