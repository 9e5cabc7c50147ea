/**
 * What every browser suite does first: launch the system Chromium (system-browser.ts) headless and
 * quiet, and keep a context's pages on the service's own origin (a request for another host is
 * recorded and never sent, so a suite can assert there were none).
 */
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { systemBrowser } from './system-browser.js';

/** No sandbox (the tests run in containers), no GPU, and nothing the browser would ask of the internet on its own. */
const QUIET = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
];

/** A headless system Chromium; `extra` adds the flags one suite needs (autoplay, say). */
export function launchBrowser(extra: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: systemBrowser(), headless: true, args: [...QUIET, ...extra] });
}

/**
 * Routes every request of `context`: one for `origin` goes on; any other is pushed to `blocked` and
 * aborted. `seen`, when given, records every URL asked for, sent or not.
 */
export async function confineToOrigin(
  context: BrowserContext,
  origin: string,
  blocked: string[],
  seen?: string[],
): Promise<void> {
  await context.route('**/*', async (route) => {
    const url = route.request().url();
    seen?.push(url);
    if (new URL(url).origin !== origin) {
      blocked.push(url);
      return route.abort('blockedbyclient');
    }
    return route.continue();
  });
}
